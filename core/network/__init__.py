"""The network a confined command gets: a local HTTP/HTTPS proxy that lets package registries and
source hosts through, asks for any other host, and logs every decision.

hosts.py        the default allowed hosts, host patterns, the three answers to a question
proxy.py        the proxy itself (plain HTTP forwarding and CONNECT tunnels, on 127.0.0.1 or a Unix socket)
child_env.py    the variables that send a child's npm, pip, git, cargo, go and curl through it
bridge.py       inside a command's own network namespace: a loopback port leading to the proxy's socket file
relay.py        copying bytes both ways between two sockets
"""

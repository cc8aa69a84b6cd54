"""The network a confined command gets: a local HTTP/HTTPS proxy that lets package registries and
source hosts through, asks for any other host, and logs every decision.

hosts.py        the default allowed hosts, host patterns, the three answers to a question
proxy.py        the proxy itself (plain HTTP forwarding and CONNECT tunnels, on 127.0.0.1 or a Unix socket)
child_env.py    the variables that send a child's npm, pip, git, cargo, go and curl through it
door.py         the way out of a command's own network namespace: a listener made there, served by the proxy
session.py      the session's proxy, its questions through the approval gate, the hosts kept per workspace
relay.py        copying bytes both ways between two sockets
"""

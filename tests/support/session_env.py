"""Environment variables that name a server of the user's session (by name or by value), and
ordinary ones a command keeps: shared by the unit and loopback tests of the command's environment."""

from __future__ import annotations

SESSION_VARIABLES = {
    "TMUX": "/tmp/tmux-1000/default,4242,0", "TMUX_PANE": "%3", "STY": "123.pts-0.host",
    "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus", "DBUS_STARTER_ADDRESS": "unix:abstract=/tmp/x",
    "SSH_AUTH_SOCK": "/tmp/ssh-X/agent.1", "SSH_AGENT_PID": "4242", "GPG_AGENT_INFO": "/run/user/1000/gnupg/S.gpg-agent:0:1",
    "DOCKER_HOST": "unix:///var/run/docker.sock", "WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0",
    "XDG_RUNTIME_DIR": "/run/user/1000", "XAUTHORITY": "/run/user/1000/.mutter-Xwaylandauth",
    "PULSE_SERVER": "unix:/run/user/1000/pulse/native", "KITTY_LISTEN_ON": "unix:/tmp/kitty",
    "NVIM": "/run/user/1000/nvim.1.0", "MY_TOOL_SOCKET": "/srv/tool.sock", "COLIMA_SOCK": "/x/c.sock",
    "SOME_ADDRESS": "tcp:host=h,port=1;unix:path=/x",
}
KEPT = {"PATH": "/usr/bin:/bin", "HOME": "/home/u", "LANG": "zh_CN.UTF-8", "TERM": "xterm", "EDITOR": "vi",
        "XDG_SESSION_TYPE": "wayland", "VIRTUAL_ENV": "/w/.venv", "PYTHONPATH": "/w/src"}

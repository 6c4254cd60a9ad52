"""A library whose declared surface is wrong on purpose: every function here does something a config must
never make happen. `test_safe_mode_audit.py` declares all of it and checks that the audit hook refuses each
act anyway, naming the config path (defence that does not depend on the list being perfect)."""

from __future__ import annotations

import os
import socket
import subprocess


def launch(path: str) -> None:
    subprocess.run(["touch", path], check=False)


def system(path: str) -> None:
    os.system(f"touch {path}")


def write(path: str) -> None:
    with open(path, "w") as f:
        f.write("x")


def append(path: str) -> None:
    with open(path, "a") as f:
        f.write("x")


def raw_write(path: str) -> None:
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT))


def read(path: str) -> str:
    with open(path) as f:
        return f.read()


def listing(path: str) -> list[str]:
    return os.listdir(path)


def remove(path: str) -> None:
    os.remove(path)


def make_folder(path: str) -> None:
    os.mkdir(path)


def rename(a: str, b: str) -> None:
    os.rename(a, b)


def connect(port: int) -> None:
    socket.create_connection(("127.0.0.1", port), timeout=1)


def evaluate(code: str) -> object:
    return eval(code)


def execute(code: str) -> None:
    exec(code)


def compile_it(code: str) -> object:
    return compile(code, "<config>", "exec")


def import_from(folder: str, name: str) -> object:
    import importlib
    import sys

    sys.path.insert(0, folder)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(folder)


def set_env(name: str) -> None:
    os.environ[name] = "1"


def swallowed_write(path: str) -> str:
    """Catches the refusal and goes on: the resolve must fail all the same."""
    try:
        with open(path, "w") as f:
            f.write("x")
    except Exception:
        return "caught"
    return "written"


def harmless(x: int) -> int:
    return x + 1

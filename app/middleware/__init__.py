"""The ASGI middleware around the app, one concern a module; stack.py puts them in order."""

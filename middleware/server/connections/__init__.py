"""Connections before and after the app: the address gate, requests read whole within
their deadlines, slow readers sent to by one thread, refused connections held, and the
two servers (development and gunicorn) that run the app only on whole requests."""

"""Test support: real server processes (``servers``) and condition waiting (``waiting``)."""

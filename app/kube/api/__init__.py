"""Calls to the API server: the client, list-and-watch, access reviews, writes, kept reads
and the shared ConfigMaps."""

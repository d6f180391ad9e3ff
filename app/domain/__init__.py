"""Pure domain rules: resource names, quantities, accounting, selectors.

Nothing here imports Flask or the Kubernetes client.
"""

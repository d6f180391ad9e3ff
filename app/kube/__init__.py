"""The only package that imports the Kubernetes client."""

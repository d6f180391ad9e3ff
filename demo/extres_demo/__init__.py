"""extres's demo and test machinery, kept out of the production package and image: a local
control plane (kube-testenv, with kwok as the kubelets), the demo cluster's seed, and the one
part of a kubelet kwok does not play. Installed with ``pip install 'extres[demo]'``."""

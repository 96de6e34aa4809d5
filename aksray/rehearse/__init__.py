"""`aksray rehearse`: a stack's queues and workloads played on the real controllers.

A real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler), the real
Kueue and KubeRay operators, and kwok nodes shaped like the stack's pools, as host processes on
loopback; or a cluster the user already runs (`--kubeconfig`). The stack is applied through the
real Pulumi engine, a scenario is played, and the controllers' own objects and events become a
timeline and a verdict per invariant.
"""

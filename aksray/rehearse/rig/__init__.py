"""The rehearsal rig: processes, certificates, a control plane, the controllers, kwok nodes and
the stand-in Ray dashboard, on loopback."""

"""The switch's control plane: the protocol's control endpoint and the table entries of a task
(`netec_control`), and the backends that write them into BMv2, P4Runtime or bfrt_python
(`backends`). Run: `python3 -m netec_p4.control.netec_control --help`."""

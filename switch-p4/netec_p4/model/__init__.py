"""The switch's rules in plain Python: GF(2^8) and Hadoop's RS matrices (`gf256`), the
protocol's reference model packet by packet (`netec_model`), and the P4 pipeline's model,
shaped like the programs in switch-p4/p4src (`pipeline`)."""

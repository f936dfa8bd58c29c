"""The P4 toolchain and BMv2: where the tools are and the compiles (`p4tools`), simple_switch in
a network namespace of its own (`bmv2_switch`), BMv2's rate (`bench`), and the Tofino 1
resource tables from p4c-barefoot's reports (`resources`)."""

"""NetEC-HDFS testbed: Hadoop daemons in network namespaces with shaped links."""

from . import hadoop, net
from .cluster import Config, Testbed
from .net import TestbedError

__all__ = ["Config", "Testbed", "TestbedError", "hadoop", "net"]

"""NetEC-HDFS testbed: Hadoop daemons in network namespaces with shaped links."""

from .cluster import Config, Testbed
from .net import TestbedError

__all__ = ["Config", "Testbed", "TestbedError"]

"""netec_sim: a flow-level simulator of whole-node recovery in an HDFS cluster with racks, per
reconstruction route (bin/netec-sim).

  network    racks, hosts, links and CPU as resources with capacities
  workload   groups placed rack-fault-tolerantly, a failure, the tasks the NameNode gives out,
             and each route's traffic per rebuilt byte (its demand on every resource)
  fairshare  max-min fair rates of the running tasks (progressive filling) and the event
             loop that runs them to the last task's end
  cli        predict, validate (against bin/netec-bench racks) and the 1,000-node table
"""

"""Max-min fair rates of running tasks over shared resources, and the event loop that runs a
recovery to its last task's end.

A task moves its rebuilt bytes at one rate r (its survivors' streams, partial results and
output all move in step: a stripe completes when every stream has delivered it), using
demand[res] x r of each resource. Rates are max-min fair (progressive filling): every
unfrozen task's rate grows alike until a resource is full; the tasks using it freeze; repeat.
This is TCP's long-run sharing of a bottleneck among flows, to first order, and what the
pipelined routes (a chain, a switch's window) converge to.
"""

import bisect
import math

import numpy as np


class FairShare:
    """Max-min fair rates among any subset of TASKS ({task: {resource: demand per unit of
    rate}}), given CAPACITY(resource) -> units per second. The demands are indexed once, as
    arrays, so that a run solves at every event for the tasks then moving without rebuilding
    them; each round of progressive filling is a few vector operations over the demands."""

    def __init__(self, tasks, capacity):
        self.index = {t: i for i, t in enumerate(tasks)}
        resources = {}
        task_of, res_of, demand = [], [], []
        for t, d in tasks.items():
            for res, x in d.items():
                if x > 0:
                    task_of.append(self.index[t])
                    res_of.append(resources.setdefault(res, len(resources)))
                    demand.append(x)
        self.task_of = np.array(task_of, dtype=np.int64)
        self.res_of = np.array(res_of, dtype=np.int64)
        self.demand = np.array(demand, dtype=float)
        self.capacity = np.array([capacity(r) for r in resources], dtype=float)
        self.full_at = 1e-9 * np.maximum(1.0, self.capacity)
        self.resources = len(resources)
        self.names = list(resources)
        self.has_demand = np.zeros(len(self.index), dtype=bool)
        self.has_demand[self.task_of] = True
        self.busy = np.zeros(self.resources)  # units used over the run (account)

    def account(self, moved):
        """Adds what the tasks moved (an array over TASKS' order) to every resource's use."""
        self.busy += np.bincount(self.res_of, weights=self.demand * moved[self.task_of],
                                 minlength=self.resources)

    def use(self):
        """{resource: units used so far}."""
        return dict(zip(self.names, self.busy.tolist()))

    def rates(self, moving):
        """Rates (an array over TASKS' order) of the tasks whose MOVING flag is set (a bool
        array; the others get 0). A moving task with no demand gets an infinite rate."""
        rates = np.zeros(len(self.index))
        rates[moving & ~self.has_demand] = np.inf
        active = moving & self.has_demand
        used = np.zeros(self.resources)
        while active.any():
            # the largest equal increment every active task can take before a resource fills
            on = active[self.task_of]
            load = np.bincount(self.res_of[on], weights=self.demand[on],
                               minlength=self.resources)
            loaded = load > 0
            inc = max(0.0, float(np.min((self.capacity[loaded] - used[loaded])
                                        / load[loaded])))
            if inc == np.inf:
                rates[active] = np.inf
                break
            rates[active] += inc
            used += load * inc
            full = loaded & (self.capacity - used <= self.full_at)
            frozen = np.unique(self.task_of[on & full[self.res_of]])
            if frozen.size == 0:  # numerical guard: nothing filled, nothing more to give
                break
            active[frozen] = False
        return rates


def max_min_rates(tasks, capacity):
    """{task: rate} for TASKS ({task: {resource: demand per unit of rate}}) given
    CAPACITY(resource) -> units per second. Tasks with no demand get an infinite rate.
    Progressive filling: every unfrozen task's rate grows alike until a resource is full; the
    tasks using it freeze; repeat."""
    share = FairShare(tasks, capacity)
    r = share.rates(np.ones(len(tasks), dtype=bool))
    return {t: float(r[i]) for t, i in share.index.items()}


def run(tasks, capacity, start_times=None, overhead_s=0.0, limit=None, heartbeat_s=None,
        weight=1.0, phases=None):
    """Runs TASKS ({task: (bytes, {resource: demand per byte}, limited at)}) to the end.

    A task is released at its start time (START_TIMES, default 0: the NameNode's round that
    scheduled it), spends OVERHEAD_S before moving bytes, then moves its bytes at its max-min
    fair rate. Admission at the DataNode it is limited at (its third field): with HEARTBEAT_S
    None, whenever that DataNode runs fewer than LIMIT tasks (None: no limit); else only at
    that DataNode's heartbeats (every HEARTBEAT_S from its phase in PHASES, default 0), up to
    LIMIT - ceil(running x WEIGHT) tasks a heartbeat (Hadoop: max-streams less the xmits in
    progress, an EC task weighing max(k, targets) x dfs.datanode.ec.reconstruction.xmits.weight).

    Returns (end of the last task, {task: (admitted, ended)}, {resource: units used in all}).
    """
    start_times = start_times or {}
    phases = phases or {}
    pending = sorted(tasks, key=lambda t: (start_times.get(t, 0.0), t))
    running = {}     # task -> bytes left
    ready_at = {}    # task -> when its overhead ends
    began, ended = {}, {}
    per_node = {}
    next_beat = {}
    now = 0.0
    eps = 1e-9
    starts = [start_times.get(t, 0.0) for t in pending]  # ascending, in step with pending
    share = FairShare({t: tasks[t][1] for t in tasks}, capacity)
    while pending or running:
        # pending is sorted by release: the released tasks are a prefix, and a node's first
        # task in it is its oldest
        released = pending[:bisect.bisect_right(starts, now + eps)]
        quota = {}
        for t in released:
            node = tasks[t][2]
            if node in quota:
                continue
            if heartbeat_s is None:
                quota[node] = float("inf") if limit is None else limit - per_node.get(node, 0)
                continue
            # its first heartbeat not yet used and not before its oldest queued task came
            beat = next_beat.get(node, phases.get(node, 0.0))
            oldest = start_times.get(t, 0.0)
            while beat < oldest - eps:
                beat += heartbeat_s
            if beat <= now + eps:
                cap = float("inf") if limit is None else limit
                quota[node] = cap - math.ceil(per_node.get(node, 0) * weight - eps)
                next_beat[node] = beat + heartbeat_s
            else:
                quota[node] = 0
                next_beat[node] = beat
        admitted = set()
        for t in released:
            node = tasks[t][2]
            if quota[node] >= 1:
                quota[node] -= 1
                admitted.add(t)
                running[t] = float(tasks[t][0])
                ready_at[t] = now + overhead_s
                began[t] = now
                per_node[node] = per_node.get(node, 0) + 1
        if admitted:
            keep = [i for i, t in enumerate(pending) if t not in admitted]
            pending = [pending[i] for i in keep]
            starts = [starts[i] for i in keep]
        moving = {t: tasks[t][1] for t in running if ready_at[t] <= now + eps}
        rates = {}
        if moving:
            mask = np.zeros(len(share.index), dtype=bool)
            mask[[share.index[t] for t in moving]] = True
            r = share.rates(mask)
            rates = {t: float(r[share.index[t]]) for t in moving}
        # the next event: a task ends, an overhead ends, a release, a heartbeat with work
        events = [now + running[t] / rates[t] for t in moving if 0 < rates[t] < float("inf")]
        events += [now for t in moving if rates[t] == float("inf")]
        events += [ready_at[t] for t in running if ready_at[t] > now + eps]
        events += [start_times.get(t, 0.0) for t in pending
                   if start_times.get(t, 0.0) > now + eps]
        waiting = {tasks[t][2] for t in pending if start_times.get(t, 0.0) <= now + eps}
        if heartbeat_s is not None:
            events += [next_beat[n] for n in waiting if n in next_beat]
        elif waiting and not running:
            raise RuntimeError("tasks cannot start (limit %s): %s" % (limit, pending[:3]))
        if not events:
            raise RuntimeError("no progress possible (a task with no capacity)")
        nxt = max(now, min(events))
        moved = np.zeros(len(share.index))
        for t in moving:
            if rates[t] == float("inf"):
                running[t] = 0.0
                continue
            m = rates[t] * (nxt - now)
            running[t] -= m
            moved[share.index[t]] = m
        share.account(moved)
        now = nxt
        for t in [t for t in running if running[t] <= 1e-6 * max(1.0, tasks[t][0])
                  and ready_at[t] <= now + eps]:
            del running[t]
            ended[t] = now
            per_node[tasks[t][2]] -= 1
    return now, {t: (began[t], ended[t]) for t in ended}, share.use()


def utilization(busy, capacity, seconds):
    """{resource kind: the busiest resource of that kind's mean use / capacity} over SECONDS:
    what bound a run (near 1: that kind of resource was full throughout)."""
    out = {}
    for res, used in busy.items():
        u = used / (capacity(res) * seconds) if seconds > 0 else 0.0
        out[res[0]] = max(out.get(res[0], 0.0), u)
    return out

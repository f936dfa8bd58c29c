"""Max-min fair rates of running tasks over shared resources, and the event loop that runs a
recovery to its last task's end.

A task moves its rebuilt bytes at one rate r (its survivors' streams, partial results and
output all move in step: a stripe completes when every stream has delivered it), using
demand[res] x r of each resource. Rates are max-min fair (progressive filling): every
unfrozen task's rate grows alike until a resource is full; the tasks using it freeze; repeat.
This is TCP's long-run sharing of a bottleneck among flows, to first order, and what the
pipelined routes (a chain, a switch's window) converge to.
"""

import math



def max_min_rates(tasks, capacity):
    """{task: rate} for TASKS ({task: {resource: demand per unit of rate}}) given
    CAPACITY(resource) -> units per second. Tasks with no demand get an infinite rate."""
    rates = {t: 0.0 for t in tasks}
    active = {t for t in tasks if any(d > 0 for d in tasks[t].values())}
    for t in tasks:
        if t not in active:
            rates[t] = float("inf")
    used = {}
    while active:
        # the largest equal increment every active task can take before a resource fills
        inc = float("inf")
        load = {}
        for t in active:
            for res, d in tasks[t].items():
                load[res] = load.get(res, 0.0) + d
        for res, d in load.items():
            if d > 0:
                inc = min(inc, (capacity(res) - used.get(res, 0.0)) / d)
        inc = max(0.0, inc)
        for t in active:
            rates[t] += inc
        for res, d in load.items():
            used[res] = used.get(res, 0.0) + d * inc
        full = {res for res in load if capacity(res) - used.get(res, 0.0) <= 1e-9 * max(
            1.0, capacity(res))}
        frozen = {t for t in active if any(res in full and d > 0 for res, d in tasks[t].items())}
        if not frozen:  # numerical guard: nothing filled, nothing more to give
            break
        active -= frozen
    return rates


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
    began, ended, busy = {}, {}, {}
    per_node = {}
    next_beat = {}
    now = 0.0
    eps = 1e-9
    while pending or running:
        released = [t for t in pending if start_times.get(t, 0.0) <= now + eps]
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
            oldest = min(start_times.get(x, 0.0) for x in released if tasks[x][2] == node)
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
        pending = [t for t in pending if t not in admitted]
        moving = {t: tasks[t][1] for t in running if ready_at[t] <= now + eps}
        rates = max_min_rates(moving, capacity) if moving else {}
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
        for t in moving:
            if rates[t] == float("inf"):
                running[t] = 0.0
                continue
            moved = rates[t] * (nxt - now)
            running[t] -= moved
            for res, d in moving[t].items():
                busy[res] = busy.get(res, 0.0) + d * moved
        now = nxt
        for t in [t for t in running if running[t] <= 1e-6 * max(1.0, tasks[t][0])
                  and ready_at[t] <= now + eps]:
            del running[t]
            ended[t] = now
            per_node[tasks[t][2]] -= 1
    return now, {t: (began[t], ended[t]) for t in ended}, busy


def utilization(busy, capacity, seconds):
    """{resource kind: the busiest resource of that kind's mean use / capacity} over SECONDS:
    what bound a run (near 1: that kind of resource was full throughout)."""
    out = {}
    for res, used in busy.items():
        u = used / (capacity(res) * seconds) if seconds > 0 else 0.0
        out[res[0]] = max(out.get(res[0], 0.0), u)
    return out

"""Max-min fair rates of running tasks over shared resources, and the event loop that runs a
recovery to its last task's end.

A task moves its rebuilt bytes at one rate r (its survivors' streams, partial results and
output all move in step: a stripe completes when every stream has delivered it), using
demand[res] x r of each resource. Rates are max-min fair (progressive filling): every
unfrozen task's rate grows alike until a resource is full; the tasks using it freeze; repeat.
This is TCP's long-run sharing of a bottleneck among flows, to first order, and what the
pipelined routes (a chain, a switch's window) converge to.
"""


def max_min_rates(tasks, capacity):
    """{task: rate} for TASKS ({task: {resource: demand per unit of rate}}) given
    CAPACITY(resource) -> units per second. Tasks with no demand get an infinite rate."""
    rates = {t: 0.0 for t in tasks}
    active = {t for t in tasks if tasks[t]}
    for t in tasks:
        if not tasks[t]:
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
        frozen = {t for t in active if any(res in full for res in tasks[t])}
        if not frozen:  # numerical guard: nothing filled, nothing more to give
            break
        active -= frozen
    return rates


def run(tasks, capacity, start_times=None, overhead_s=0.0, limit=None):
    """Runs TASKS ({task: (bytes, {resource: demand per byte}, target)}) to the end: a task
    starts at its start time (START_TIMES, default 0) once its target runs fewer than LIMIT
    tasks (None: no limit), spends OVERHEAD_S before moving bytes, then moves its bytes at its
    max-min fair rate. Returns (end time of the last task, {task: (start, end)})."""
    start_times = start_times or {}
    pending = sorted(tasks, key=lambda t: (start_times.get(t, 0.0), str(t)))
    running = {}     # task -> bytes left
    ready_at = {}    # task -> when its overhead ends
    began, ended = {}, {}
    per_target = {}
    now = 0.0
    while pending or running:
        # start what may start now
        still = []
        for t in pending:
            target = tasks[t][2]
            if start_times.get(t, 0.0) <= now + 1e-12 and (
                    limit is None or per_target.get(target, 0) < limit):
                running[t] = float(tasks[t][0])
                ready_at[t] = now + overhead_s
                began[t] = now
                per_target[target] = per_target.get(target, 0) + 1
            else:
                still.append(t)
        pending = still
        moving = {t: tasks[t][1] for t in running if ready_at[t] <= now + 1e-12}
        rates = max_min_rates(moving, capacity) if moving else {}
        # the next event: a task ends, a task's overhead ends, a task's start time comes
        events = [now + running[t] / rates[t] for t in moving if rates[t] > 0]
        events += [ready_at[t] for t in running if ready_at[t] > now + 1e-12]
        events += [start_times.get(t, 0.0) for t in pending
                   if start_times.get(t, 0.0) > now + 1e-12]
        if not events:
            if pending and not running:
                raise RuntimeError("tasks cannot start: %s" % pending[:3])
            raise RuntimeError("no progress possible (a task with no capacity)")
        nxt = min(events)
        for t in moving:
            if rates[t] == float("inf"):
                running[t] = 0.0
            else:
                running[t] -= rates[t] * (nxt - now)
        now = nxt
        for t in [t for t in running if running[t] <= 1e-6 * max(1.0, tasks[t][0])
                  and ready_at[t] <= now + 1e-12]:
            del running[t]
            ended[t] = now
            per_target[tasks[t][2]] -= 1
    return now, {t: (began[t], ended[t]) for t in ended}

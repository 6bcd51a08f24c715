#!/usr/bin/env python3
# timeline.py BIN TRACE STEP...: a voxel edit step's host timeline from GHM_TRACE_WAITS lines:
# each CUDA call / launch check (TRACEPT) and host wait (TRACEWAIT), time since the step's
# start, the gap since the previous point's end, the call's duration.
import subprocess, sys
binp, trace, want = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]
steps, offs = [], set()
for line in open(trace):
    f = line.split()
    if not f: continue
    if f[0] == 'TRACESTEP':
        steps.append((int(f[1]), float(f[2]), []))
    elif f[0] == 'TRACEPT' and steps:
        steps[-1][2].append((float(f[1]), float(f[2]), f[3], None))
    elif f[0] == 'TRACEWAIT' and steps:
        offs.update(f[3:])
        steps[-1][2].append((float(f[1]), float(f[2]), 'WAIT', f[3:]))
offs = sorted(offs)
out = subprocess.run(['addr2line', '-f', '-C', '-e', binp] + ['0x' + x for x in offs],
                     capture_output=True, text=True).stdout.split('\n')
name = {o: out[2 * i].split('(')[0] for i, o in enumerate(offs)}
skip = ('ghm_cuda_wait', 'ghmt_')
ops = {0: 'add', 1: 'sub', 2: 'int'}
for k in want:
    op, t, pts = steps[k]
    pts.sort(key=lambda p: p[0])
    print('step %d %s' % (k, ops.get(op, op)))
    prev = t
    for t0, d, where, o in pts:
        gap = t0 - prev
        if o:
            where = 'WAIT ' + ' < '.join([name[x] for x in o if not name[x].startswith(skip)][:3])
        mark = ' <<<' if gap > 20 or d > 20 else ''
        print('  +%7.0f gap %5.0f dur %5.0f  %s%s' % (t0 - t, gap, d, where, mark))
        prev = max(prev, t0 + d)

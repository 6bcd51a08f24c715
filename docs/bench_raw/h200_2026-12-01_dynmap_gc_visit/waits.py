#!/usr/bin/env python3
# waits.py BIN TRACE: the host waits of each voxel edit step (GHM_TRACE_WAITS lines), callers named.
import subprocess, sys, collections
binp, trace = sys.argv[1], sys.argv[2]
steps, offs = [], set()
for line in open(trace):
    f = line.split()
    if not f: continue
    if f[0] == 'TRACESTEP':
        steps.append((int(f[1]), float(f[2]), []))
    elif f[0] == 'TRACEWAIT' and steps:
        o = f[3:]
        offs.update(o)
        steps[-1][2].append((float(f[1]), float(f[2]), o))
offs = sorted(offs)
out = subprocess.run(['addr2line', '-f', '-C', '-e', binp] + ['0x' + x for x in offs],
                     capture_output=True, text=True).stdout.split('\n')
name = {o: out[2 * i] for i, o in enumerate(offs)}
skip = ('ghm_cuda_wait', 'ghmt_', 'ghm_cuda_wait_event')
ops = {0: 'add', 1: 'sub', 2: 'int'}
for k, (op, t, ws) in enumerate(steps):
    tot = sum(w[1] for w in ws)
    print('step %d %s: %d waits, %.0f us waiting' % (k, ops.get(op, op), len(ws), tot))
    for t0, d, o in ws:
        chain = [name[x] for x in o if not name[x].startswith(skip)][:4]
        print('   +%7.0f us  %6.0f us  %s' % (t0 - t, d, ' < '.join(chain)))

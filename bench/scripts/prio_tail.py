#!/usr/bin/env python3
"""bench_prio_flood's slow samples, split (docs/priorities.md, "The wake-to-run tail").

    WEFT_TAIL_TRACE=/tmp/tt PRIO_FLOOD_SLOW=/tmp/slow build-trace/bench/bench_prio_flood -r 1 -i spin
    bench/scripts/prio_tail.py /tmp/tt /tmp/slow

(build-trace: a build with -DCMAKE_C_FLAGS=-DWEFT_TAIL_TRACE.) For each slow
sample: which worker served it (the last request honoured before the run),
when that request was made (the runtime's part: the wait until the right
worker was asked; 0 if it was pending at the post) and the rest (the host's
part: that worker's kernel thread reaching its CPU, the handler, the
switch). Args: the trace file, the PRIO_FLOOD_SLOW file."""
import sys, bisect, statistics as S
runs=[];cur=[]
for line in open(sys.argv[1]):
    if line.startswith('END'): runs.append(cur);cur=[];continue
    cur.append(tuple(map(int,line.split())))
sl=[];c=[]
for line in open(sys.argv[2]):
    if line.startswith('RUNEND'): sl.append(c);c=[];continue
    _,p,l=line.split();c.append((int(p),float(l)))
rt=[];host=[];n=0;lat=[]
for ev,ss in zip(runs,sl):
    ts=[e[0] for e in ev]
    for p,l in ss:
        end=p+l
        i=bisect.bisect_left(ts,p); j=bisect.bisect_right(ts,end)
        win=ev[i:j]
        # the worker that took the HIGH thread: its handler's pick of a HIGH
        hs=[e for e in win if e[1]==9 and e[4]>=1]
        if not hs: continue
        w=hs[0][2]
        # the request honoured: the last one made to w before its handler ran
        # (made before the post if it was pending then: the runtime's part is 0)
        k=bisect.bisect_right(ts,hs[0][0])
        reqs=[e for e in ev[max(0,k-5000):k] if e[1]==3 and e[2]==w]
        if not reqs: continue
        a=max(0.0,(reqs[-1][0]-p)/1e3)
        rt.append(a); host.append(l/1e3-a); lat.append(l/1e3); n+=1
print(f'slow samples attributed: {n}; latency sum {sum(lat):.0f} us; runtime part (post to the serving worker asked): sum {sum(rt):.0f} us ({100*sum(rt)/sum(lat):.0f}%), median {S.median(rt):.0f} us, max {max(rt):.0f}; host part median {S.median(host):.0f} us')

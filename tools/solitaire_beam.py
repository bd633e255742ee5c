#!/usr/bin/env python3
# Finds a plan to goal 100 of ../shared/games/solitaireChineseCheckers.kif:
# a beam search over the game's own relations (car/cdr per colour, toCount
# homes), 300 states a step ranked by the sum of each stone's single-step
# distance to its colour's home cells. Prints the plan in the format of
# tests/data/*.solution (one joint move a line, stopping at the terminal state
# the last stone home makes). Game-specific on purpose: it is the oracle the
# tests replay (tests/propnet.rs), not part of ggp-asp.
#   python3 tools/solitaire_beam.py > tests/data/solitaireChineseCheckers.solution
import os, re, sys, collections
here=os.path.dirname(os.path.abspath(__file__))
src=open(os.path.join(here,'../../shared/games/solitaireChineseCheckers.kif')).read()
facts=lambda name: re.findall(r'\(%s (\w+) (\w+)\)'%name, src)
base={}
for n in ['carred','caryellow','carmagenta','cdrred','cdryellow','cdrmagenta']:
    base[n]=facts(n)
def rel(kind,colour):
    m={'red':('red',False),'yellow':('yellow',False),'green':('magenta',True),'teal':('red',True),'blue':('yellow',True),'magenta':('magenta',False)}
    b,rev=m[colour]
    pairs=base[kind+b]
    return [(e,b_) for (b_,e) in pairs] if rev else list(pairs)
colours=['red','yellow','green','teal','blue','magenta']
car={c:dict() for c in colours}; cdr={c:dict() for c in colours}
for c in colours:
    for a,b in rel('car',c): car[c].setdefault(a,[]).append(b)
    for a,b in rel('cdr',c): cdr[c].setdefault(a,[]).append(b)
home={}
for m in re.finditer(r'\(toCount (\w+) (\w+) (\w+) (\w+)\)',src): home[m.group(1)]=set(m.group(2,3,4))
init={}
for m in re.finditer(r'\(init \(cell (\w+) (\w+)\)\)',src): init[m.group(1)]=m.group(2)
cells=set(re.findall(r'\(index (\w+)\)',src))
# distances to home per colour (single steps)
dist={}
for c in colours:
    succ=collections.defaultdict(list)
    for a,l in car[c].items():
        for b in l: succ[a].append(b)
    for a,l in cdr[c].items():
        for b in l: succ[a].append(b)
    # reverse BFS from home
    pred=collections.defaultdict(list)
    for a,l in succ.items():
        for b in l: pred[b].append(a)
    d={h:0 for h in home[c]}; q=collections.deque(home[c])
    while q:
        x=q.popleft()
        for p in pred[x]:
            if p not in d: d[p]=d[x]+1; q.append(p)
    dist[c]=d
def jumpable(c,board,b):
    out=[]
    for rels in (car[c],cdr[c]):
        for m in rels.get(b,[]):
            if m in board:
                for e in rels.get(m,[]):
                    if e not in board and e in cells: out.append(e)
    return out
def moves(c,board):
    res=set()
    for b,col in board.items():
        if col!=c: continue
        for rels in (car[c],cdr[c]):
            for e in rels.get(b,[]):
                if e not in board: res.add((b,e))
        # jump chains up to 4 (GDL: each intermediate must be empty now; b stays occupied)
        frontier=[b]
        for k in range(4):
            nf=[]
            for x in frontier:
                for e in jumpable(c,board,x):
                    res.add((b,e)); nf.append(e)
            frontier=nf
    return res
def score(board):
    return sum(1 for x,c in board.items() if x in home[c])
def h(board):
    return sum(dist[c].get(x,99) for x,c in board.items())
W=int(sys.argv[1]) if len(sys.argv)>1 else 300
beam=[(dict(init),[])]
for step in range(54):
    c=colours[step%6]
    cand={}
    for board,plan in beam:
        opts=list(moves(c,board))+[None]
        for mv in opts:
            nb=dict(board)
            if mv:
                b,e=mv; del nb[b]; nb[e]=c
            key=frozenset(nb.items())
            if key not in cand: cand[key]=(nb,plan+[mv])
    items=list(cand.values())
    items.sort(key=lambda t:(h(t[0]), -score(t[0])))
    beam=items[:W]
best=max(beam,key=lambda t:score(t[0]))
assert score(best[0])==18, 'no plan to 100 in the beam'
# The game ends as soon as every stone is home: cut the plan there.
board=dict(init); out=[]
for mv in best[1]:
    if score(board)==18: break
    if mv:
        del board[mv[0]]; board[mv[1]]=colours[len(out)%6]
    out.append('((move %s %s))'%mv if mv else '(noop)')
print('; a plan to goal 100 of ../shared/games/solitaireChineseCheckers.kif (%d moves),'%len(out))
print('; found by tools/solitaire_beam.py (a beam search outside ggp-asp);')
print('; replayed in tests/propnet.rs')
print('\n'.join(out))

//! The expected-demand assignment behind `CapacityPressure`: a transportation problem (regions
//! supply demand, seeds offer capacity, a unit costs its latency) solved as a min-cost flow by
//! successive shortest paths, and the price of one unit of each seed's capacity read from the
//! optimal residual network.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Integer units (shoots) and integer costs (microseconds), so the solution is exact.
#[derive(Clone, Debug)]
pub struct Problem {
    /// Expected shoots per region.
    pub demand: Vec<u64>,
    /// Slots per seed.
    pub capacity: Vec<u64>,
    /// `cost[r][s]`: one shoot of region `r` on seed `s`.
    pub cost: Vec<Vec<i64>>,
    /// One shoot of demand left without a seed; bounds every price.
    pub unserved: i64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    /// What one slot less on each seed would cost the plan (0 where the plan leaves room).
    pub price: Vec<i64>,
    /// `flow[r][s]`: planned shoots of region `r` on seed `s`.
    pub flow: Vec<Vec<u64>>,
    pub unserved: Vec<u64>,
    pub cost: i64,
}

struct Edge {
    to: usize,
    cap: u64,
    cost: i64,
    rev: usize,
}

struct Graph {
    adj: Vec<Vec<Edge>>,
}

impl Graph {
    fn add(&mut self, from: usize, to: usize, cap: u64, cost: i64) -> (usize, usize) {
        let (i, j) = (self.adj[from].len(), self.adj[to].len());
        self.adj[from].push(Edge {
            to,
            cap,
            cost,
            rev: j,
        });
        self.adj[to].push(Edge {
            to: from,
            cap: 0,
            cost: -cost,
            rev: i,
        });
        (from, i)
    }
}

/// Minimises total cost with every unit of demand either on a seed within capacity or unserved.
// Region and seed indices address several parallel tables at once; index loops read clearest.
#[allow(clippy::needless_range_loop)]
pub fn solve(p: &Problem) -> Solution {
    let (nr, ns) = (p.demand.len(), p.capacity.len());
    let (source, sink) = (0, nr + ns + 1);
    let region = |r: usize| 1 + r;
    let seed = |s: usize| 1 + nr + s;
    let mut g = Graph {
        adj: (0..nr + ns + 2).map(|_| Vec::new()).collect(),
    };
    let total: u64 = p.demand.iter().sum();
    let mut pairs = vec![Vec::with_capacity(ns); nr];
    let mut unserved_edges = Vec::with_capacity(nr);
    for r in 0..nr {
        g.add(source, region(r), p.demand[r], 0);
        for s in 0..ns {
            pairs[r].push(g.add(region(r), seed(s), total, p.cost[r][s]));
        }
        unserved_edges.push(g.add(region(r), sink, total, p.unserved));
    }
    for s in 0..ns {
        g.add(seed(s), sink, p.capacity[s], 0);
    }

    // Successive shortest paths; costs are non-negative, so zero potentials start valid.
    let n = g.adj.len();
    let mut potential = vec![0i64; n];
    let mut sent = 0u64;
    let mut cost = 0i64;
    while sent < total {
        let mut dist = vec![i64::MAX; n];
        let mut prev: Vec<Option<(usize, usize)>> = vec![None; n];
        dist[source] = 0;
        let mut heap = BinaryHeap::from([Reverse((0i64, source))]);
        while let Some(Reverse((d, u))) = heap.pop() {
            if d > dist[u] {
                continue;
            }
            for (i, e) in g.adj[u].iter().enumerate() {
                if e.cap == 0 {
                    continue;
                }
                let nd = d + e.cost + potential[u] - potential[e.to];
                if nd < dist[e.to] {
                    dist[e.to] = nd;
                    prev[e.to] = Some((u, i));
                    heap.push(Reverse((nd, e.to)));
                }
            }
        }
        if dist[sink] == i64::MAX {
            break; // no demand left that can move
        }
        // Nodes the source cannot reach never become reachable again, so their potential is moot.
        for v in 0..n {
            if dist[v] != i64::MAX {
                potential[v] += dist[v];
            }
        }
        let mut push = total - sent;
        let mut v = sink;
        while let Some((u, i)) = prev[v] {
            push = push.min(g.adj[u][i].cap);
            v = u;
        }
        let mut v = sink;
        while let Some((u, i)) = prev[v] {
            let e = &mut g.adj[u][i];
            e.cap -= push;
            cost += e.cost * push as i64;
            let (to, rev) = (e.to, e.rev);
            g.adj[to][rev].cap += push;
            v = u;
        }
        sent += push;
    }

    let used = |(u, i): (usize, usize)| -> u64 {
        let e = &g.adj[u][i];
        g.adj[e.to][e.rev].cap
    };
    let flow: Vec<Vec<u64>> = pairs
        .iter()
        .map(|row| row.iter().map(|&at| used(at)).collect())
        .collect();
    let unserved: Vec<u64> = unserved_edges.iter().map(|&at| used(at)).collect();
    let load: Vec<u64> = (0..ns)
        .map(|s| flow.iter().map(|row| row[s]).sum())
        .collect();

    // Price of a slot: the cheapest way to re-plan one unit that the seed carries, i.e. the
    // residual distance seed -> sink. A seed with room has distance 0. The residual network of
    // an optimal flow has no negative cycle, so Bellman-Ford rounds over this bipartite
    // recurrence settle within `nr + ns` rounds.
    let mut to_sink_seed: Vec<i64> = (0..ns)
        .map(|s| if load[s] < p.capacity[s] { 0 } else { i64::MAX })
        .collect();
    let mut to_sink_region = vec![p.unserved; nr];
    for _ in 0..=(nr + ns) {
        let mut changed = false;
        for r in 0..nr {
            let best = (0..ns)
                .filter(|&s| to_sink_seed[s] != i64::MAX)
                .map(|s| p.cost[r][s] + to_sink_seed[s])
                .min()
                .unwrap_or(i64::MAX)
                .min(p.unserved);
            if best < to_sink_region[r] {
                to_sink_region[r] = best;
                changed = true;
            }
        }
        for s in 0..ns {
            let best = (0..nr)
                .filter(|&r| flow[r][s] > 0)
                .map(|r| to_sink_region[r] - p.cost[r][s])
                .min();
            if let Some(b) = best
                && b < to_sink_seed[s]
            {
                to_sink_seed[s] = b;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let price = to_sink_seed
        .iter()
        .map(|d| if *d == i64::MAX { 0 } else { (*d).max(0) })
        .collect();

    Solution {
        price,
        flow,
        unserved,
        cost,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(demand: &[u64], capacity: &[u64], cost: &[&[i64]]) -> Problem {
        Problem {
            demand: demand.to_vec(),
            capacity: capacity.to_vec(),
            cost: cost.iter().map(|r| r.to_vec()).collect(),
            unserved: 1_000,
        }
    }

    #[test]
    fn demand_that_fits_at_home_stays_home_and_prices_nothing() {
        let got = solve(&problem(&[3, 2], &[5, 5], &[&[2, 50], &[50, 2]]));
        assert_eq!(got.flow, vec![vec![3, 0], vec![0, 2]]);
        assert_eq!(got.price, vec![0, 0]);
        assert_eq!(got.cost, 10);
    }

    #[test]
    fn overflow_goes_where_it_displaces_the_least_and_the_full_seed_is_priced() {
        // Region 0 has 4 shoots and a seed for 2; seed 1 (10 away) is region 1's home and
        // region 1 fills it, seed 2 (30 away) is nobody's. Region 0's overflow goes to seed 2.
        let got = solve(&problem(
            &[4, 3],
            &[2, 3, 10],
            &[&[2, 10, 30], &[40, 2, 100]],
        ));
        assert_eq!(got.flow, vec![vec![2, 0, 2], vec![0, 3, 0]]);
        assert_eq!(got.unserved, vec![0, 0]);
        // One slot less on seed 0 moves one more shoot of region 0 to seed 2: 30 - 2.
        assert_eq!(got.price[0], 28);
        // One slot less on seed 1: a shoot of region 1 moves to seed 0 (40 - 2) and pushes one
        // of region 0 on to seed 2 (30 - 2): 66, cheaper than region 1 -> seed 2 (100 - 2).
        assert_eq!(got.price[1], 66);
        assert_eq!(got.price[2], 0);
    }

    #[test]
    fn demand_beyond_capacity_is_left_unserved_at_the_penalty_which_caps_prices() {
        let got = solve(&problem(&[5], &[2], &[&[2]]));
        assert_eq!(got.flow, vec![vec![2]]);
        assert_eq!(got.unserved, vec![3]);
        assert_eq!(got.price, vec![998]);
    }

    #[test]
    fn the_plan_matches_brute_force_on_small_problems() {
        // Every split of 3 + 2 shoots over two seeds of capacity 3: the solver's cost is the minimum.
        let cost: &[&[i64]] = &[&[5, 9], &[7, 3]];
        let got = solve(&problem(&[3, 2], &[3, 3], cost));
        let mut best = i64::MAX;
        for a in 0..=3u64 {
            for b in 0..=2u64 {
                let (on0, on1) = (a + b, (3 - a) + (2 - b));
                if on0 <= 3 && on1 <= 3 {
                    let c = a as i64 * 5 + (3 - a) as i64 * 9 + b as i64 * 7 + (2 - b) as i64 * 3;
                    best = best.min(c);
                }
            }
        }
        assert_eq!(got.cost, best);
    }
}

package mesh

// The order pairs are started in. The scheduler (measureAll) starts the
// first pair in this order whose two peers are both free, while fewer
// than Plan.Concurrency run, and never a peer in two pairs at once. The
// order decides how close a round comes to its bound, pairs x length /
// concurrency: a free peer whose every pending pair waits for a busy one
// stays idle, and taken in the order given (every pair of the first peer,
// then of the second) the pairs of n peers leave most peers so.
//
// For every ordered pair of n peers the order is a round-robin
// tournament by the circle method, played twice: peer n-1 (or, for an
// odd n, a bye) stays put while the others turn round a circle, and each
// of the n-1 turns pairs everyone off, n/2 disjoint pairs; the second
// pass plays every pair the other way. So 2(n-1) rounds of n/2 pairs
// (for 24 peers: 46 rounds of 12) cover the n(n-1) ordered pairs, and
// with a concurrency of n/2 and pairs of one length the scheduler runs
// them as those rounds, the bound itself. A concurrency under n/2 takes
// each round in parts; over it gains nothing, as no more than n/2 pairs
// can be disjoint. Each peer sends in half of its pairs of a pass
// (within one), so that no peer's sending is bunched at either end.
//
// Any other set of pairs (--pairs) is ordered into maximal matchings
// taken greedily in the order given: each round is as many of the pairs
// left as can run together, the earliest first.

// scheduleOrder returns the indexes of pairs in the order to start them.
func scheduleOrder(n int, pairs []Pair) []int {
	if complete(n, pairs) {
		return tournament(n, pairs)
	}
	return matchings(n, pairs)
}

// complete reports whether pairs are every ordered pair of n peers, each
// once.
func complete(n int, pairs []Pair) bool {
	if n < 2 || len(pairs) != n*(n-1) {
		return false
	}
	seen := make([]bool, n*n)
	for _, p := range pairs {
		if p.Src == p.Dst || p.Src < 0 || p.Dst < 0 || p.Src >= n || p.Dst >= n || seen[p.Src*n+p.Dst] {
			return false
		}
		seen[p.Src*n+p.Dst] = true
	}
	return true
}

// tournament orders every ordered pair of n peers as 2(n-1) rounds of
// disjoint pairs, by the circle method.
func tournament(n int, pairs []Pair) []int {
	index := make([]int, n*n)
	for i, p := range pairs {
		index[p.Src*n+p.Dst] = i
	}
	m := n + n%2 // with a bye, for an odd n
	order := make([]int, 0, len(pairs))
	for pass := range 2 {
		for r := range m - 1 {
			for k := range m / 2 {
				// Turn r: the fixed peer m-1 plays r; the others pair
				// off around the circle of 0..m-2.
				a, b := m-1, r
				if k > 0 {
					a, b = (r+k)%(m-1), (r-k+m-1)%(m-1)
				}
				if a >= n || b >= n {
					continue // the bye
				}
				// Who sends: the fixed peer in every other turn, and on
				// the circle by the pair's distance k, which is the same
				// for a pair in every turn; so each peer sends in half
				// its pairs of a pass, within one. The second pass
				// reverses every pair.
				flip := k%2 == 0
				if k == 0 {
					flip = r%2 == 1
				}
				if flip != (pass == 1) {
					a, b = b, a
				}
				order = append(order, index[a*n+b])
			}
		}
	}
	return order
}

// matchings orders pairs into rounds of disjoint pairs, each round the
// pairs left that fit, taken in the order given.
func matchings(n int, pairs []Pair) []int {
	order := make([]int, 0, len(pairs))
	left := make([]int, len(pairs))
	for i := range left {
		left[i] = i
	}
	used := make([]bool, n)
	for len(left) > 0 {
		clear(used)
		var next []int
		for _, i := range left {
			p := pairs[i]
			if used[p.Src] || used[p.Dst] {
				next = append(next, i)
				continue
			}
			used[p.Src], used[p.Dst] = true, true
			order = append(order, i)
		}
		left = next // the first pair left always fits: each round takes one
	}
	return order
}

// Package textdist measures how far apart two words are, for the readers
// that answer a misspelt key with "did you mean".
package textdist

// Edit returns the Levenshtein distance between a and b (insertions,
// deletions and substitutions of bytes), or 64 for words longer than 64
// bytes, which no key is.
func Edit(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// SPDX-License-Identifier: Apache-2.0
// top_k along one axis viewed as [OUTER, L, INNER]: one invocation per
// input element counts the elements of its row that go before it (larger,
// or smaller without LARGEST; NaN after every number in ascending order;
// ties by index, so every element has its own rank) and, when that rank is
// below K, writes its value (VALUES) or its index to output position rank.
// The output is sorted whatever `sorted` asks, as in "ref".
// Generator provides: TOTAL (= OUTER * L * INNER), L, K, INNER, LARGEST,
// VALUES, IN_T, VKP_ISNAN(x), IN0 = x, STORE(o, v).
int vkp_order(IN_T a, IN_T b) {
  bool an = VKP_ISNAN(a), bn = VKP_ISNAN(b);
  if (an || bn) return an == bn ? 0 : (an ? 1 : -1);
  return a < b ? -1 : (a > b ? 1 : 0);
}

void main() {
  uint t = gl_GlobalInvocationID.x;
  if (t >= TOTAL) return;
  uint inner = t % INNER, i = (t / INNER) % L, outer = t / (INNER * L);
  uint base = outer * L * INNER + inner;
  IN_T x = IN0[t];
  uint rank = 0u;
  for (uint j = 0u; j < L && rank < K; ++j) {
    if (j == i) continue;
    int c = vkp_order(IN0[base + j * INNER], x);
    bool before = LARGEST != 0 ? c > 0 : c < 0;
    if (before || (c == 0 && j < i)) ++rank;
  }
  if (rank >= K) return;
  uint o = (outer * K + rank) * INNER + inner;
#if VALUES
  STORE(o, x);
#else
  STORE(o, ACC_T(i));
#endif
}

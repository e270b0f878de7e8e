// SPDX-License-Identifier: Apache-2.0
// Resize, one output element per invocation: the weighted sum of its taps
// along every resampled dim (vkp_resize_value, generated with the tap
// tables). Generator provides: TOTAL, vkp_resize_value, IN0, STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  STORE(o, vkp_resize_value(o));
}

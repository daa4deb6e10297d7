# regression_csv.awk — a deterministic regression CSV for the raw_mlp tests:
#   awk -v n=ROWS -v seed=S -v noise=SIGMA -v wide=W -f regression_csv.awk > data.csv
# Columns x1..x4 and, with wide > 0, w1..wWIDE (distractors), then y. Inputs u_i are uniform in
# [-1, 1]; x4 is stored as 50*u4 + 100 (another scale, so that standardisation matters), the
# others as u_i. y = sin(2 u1) + u2 u3 - 0.5 u4^2 + 1 + N(0, noise^2) (Box-Muller). The same
# (n, seed, noise, wide) gives the same file with a given awk.
BEGIN {
  srand(seed)
  printf "x1,x2,x3,x4"
  for (k = 1; k <= wide; k++) printf ",w%d", k
  print ",y"
  for (r = 0; r < n; r++) {
    for (i = 1; i <= 4; i++) u[i] = 2 * rand() - 1
    e = sqrt(-2 * log(1 - rand())) * cos(6.283185307179586 * rand())
    y = sin(2 * u[1]) + u[2] * u[3] - 0.5 * u[4] * u[4] + 1 + noise * e
    printf "%.6f,%.6f,%.6f,%.6f", u[1], u[2], u[3], 50 * u[4] + 100
    for (k = 1; k <= wide; k++) printf ",%.6f", 2 * rand() - 1
    printf ",%.6f\n", y
  }
}

//! ns-3's random-number generator, for the like-for-like mode: L'Ecuyer's MRG32k3a combined
//! multiple-recursive generator with ns-3 3.37's stream layout (`ns3::RngStream`,
//! `RandomVariableStream::SetStream`).
//!
//! A RED queue that draws the same numbers in the same order as ns-3's `RedQueueDisc` makes the
//! same early drops, so a comparison with ns-3 tests the queue and TCP models rather than two
//! unrelated random sequences. The arithmetic is exact integer arithmetic modulo the two
//! moduli; ns-3 does the same in doubles, exactly (every intermediate stays below 2^53), so the
//! states agree bit for bit and the returned doubles too (one multiplication by the same
//! constant).

/// First component's modulus, 2^32 - 209.
const M1: i64 = 4_294_967_087;
/// Second component's modulus, 2^32 - 22853.
const M2: i64 = 4_294_944_443;
/// First component's recurrence: x[n] = A12 x[n-2] - A13N x[n-3] (mod M1).
const A12: i64 = 1_403_580;
const A13N: i64 = 810_728;
/// Second component's recurrence: y[n] = A21 y[n-1] - A23N y[n-3] (mod M2).
const A21: i64 = 527_612;
const A23N: i64 = 1_370_589;

type Matrix = [[i64; 3]; 3];

/// The first component's one-step transition on (x[n-3], x[n-2], x[n-1]).
const A1: Matrix = [[0, 1, 0], [0, 0, 1], [-A13N, A12, 0]];
/// The second component's one-step transition on (y[n-3], y[n-2], y[n-1]).
const A2: Matrix = [[0, 1, 0], [0, 0, 1], [-A23N, 0, A21]];

/// Why a seed cannot start ns-3's generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadSeed(pub u64);

impl std::fmt::Display for BadSeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "seed {} cannot start ns-3's MRG32k3a (it needs 1 <= seed < {M2})",
            self.0
        )
    }
}

impl std::error::Error for BadSeed {}

/// One MRG32k3a stream, as ns-3's `RngStream`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mrg32k3a {
    /// (x[n-3], x[n-2], x[n-1]) then (y[n-3], y[n-2], y[n-1]).
    state: [i64; 6],
}

impl Mrg32k3a {
    /// ns-3's `RngStream(seed, stream, substream)`: every state word set to `seed`, then moved
    /// on by `stream` x 2^127 and `substream` x 2^76 steps.
    pub fn new(seed: u64, stream: u64, substream: u64) -> Result<Mrg32k3a, BadSeed> {
        if seed == 0 || seed >= M2 as u64 {
            return Err(BadSeed(seed));
        }
        let s = seed as i64;
        let mut g = Mrg32k3a { state: [s; 6] };
        g.advance(stream, 127);
        g.advance(substream, 76);
        Ok(g)
    }

    /// The stream ns-3 gives a random variable after `SetStream(stream)` with the global seed
    /// `seed` and run `run` (`RngSeedManager::SetSeed`/`SetRun`): explicitly numbered streams
    /// are the upper half, 2^63 + `stream`, and the run is the substream.
    pub fn ns3_assigned(seed: u64, stream: u64, run: u64) -> Result<Mrg32k3a, BadSeed> {
        Mrg32k3a::new(seed, (1u64 << 63) | stream, run)
    }

    /// The next number in [0, 1) (ns-3's `RandU01`, which `UniformRandomVariable::GetValue()`
    /// returns unchanged for its default range [0, 1)).
    pub fn next_u01(&mut self) -> f64 {
        let s = &mut self.state;
        let p1 = (A12 * s[1] - A13N * s[0]).rem_euclid(M1);
        s[0] = s[1];
        s[1] = s[2];
        s[2] = p1;
        let p2 = (A21 * s[5] - A23N * s[3]).rem_euclid(M2);
        s[3] = s[4];
        s[4] = s[5];
        s[5] = p2;
        // ns-3: `(p1 > p2) ? (p1 - p2) * norm : (p1 - p2 + m1) * norm`, norm = 1 / (m1 + 1).
        let norm = 1.0 / (M1 as f64 + 1.0);
        let d = if p1 > p2 { p1 - p2 } else { p1 - p2 + M1 };
        d as f64 * norm
    }

    /// Moves the state on by `n` x 2^`by` steps (ns-3's `AdvanceNthBy`; powers of one matrix
    /// commute, so the order of the factors does not change the result).
    fn advance(&mut self, n: u64, by: u32) {
        if n == 0 {
            return;
        }
        let mut p1 = mat_pow2(&A1, by, M1);
        let mut p2 = mat_pow2(&A2, by, M2);
        let mut n = n;
        while n > 0 {
            if n & 1 == 1 {
                let (a, b) = self.state.split_at_mut(3);
                mat_vec(&p1, a, M1);
                mat_vec(&p2, b, M2);
            }
            n >>= 1;
            if n > 0 {
                p1 = mat_mul(&p1, &p1, M1);
                p2 = mat_mul(&p2, &p2, M2);
            }
        }
    }
}

/// `a` x `b` modulo `m`, entries in [0, m).
fn mat_mul(a: &Matrix, b: &Matrix, m: i64) -> Matrix {
    let mut c = [[0i64; 3]; 3];
    for (i, row) in c.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            let mut acc: i128 = 0;
            for (k, bk) in b.iter().enumerate() {
                acc += i128::from(a[i][k]) * i128::from(bk[j]);
            }
            *cell = acc.rem_euclid(i128::from(m)) as i64;
        }
    }
    c
}

/// `a`^(2^`e`) modulo `m`.
fn mat_pow2(a: &Matrix, e: u32, m: i64) -> Matrix {
    let mut p = mat_mul(a, &[[1, 0, 0], [0, 1, 0], [0, 0, 1]], m);
    for _ in 0..e {
        p = mat_mul(&p, &p, m);
    }
    p
}

/// `v` := `a` x `v` modulo `m`.
fn mat_vec(a: &Matrix, v: &mut [i64], m: i64) {
    let x: [i64; 3] = std::array::from_fn(|i| {
        let acc: i128 = (0..3).map(|k| i128::from(a[i][k]) * i128::from(v[k])).sum();
        acc.rem_euclid(i128::from(m)) as i64
    });
    v.copy_from_slice(&x);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_ns3_3_37s_numbers() {
        // Printed by Debian's libns3-core 3.37: `RngSeedManager::SetSeed(seed)`, `SetRun(1)`,
        // a `UniformRandomVariable` with `SetStream(stream)`, four `GetValue()` calls (%.17g, kept
        // as text: 17 digits, each parses back to the very double).
        let want: [(u64, u64, [&str; 4]); 6] = [
            (
                1,
                0,
                [
                    "0.95644401594539075",
                    "0.90941709679522476",
                    "0.54893489768227077",
                    "0.54805783787649831",
                ],
            ),
            (
                1,
                3,
                [
                    "0.9098688595119685",
                    "0.49790748431458065",
                    "0.062786643640050183",
                    "0.59102858182367524",
                ],
            ),
            (
                1,
                131073,
                [
                    "0.84137980779795918",
                    "0.21918831569868366",
                    "0.27900225413787855",
                    "0.2231482997105565",
                ],
            ),
            (
                7,
                3,
                [
                    "0.36907147354606229",
                    "0.48534711868320612",
                    "0.43947487217624986",
                    "0.1371737126102979",
                ],
            ),
            (
                7,
                131073,
                [
                    "0.88962702244576553",
                    "0.53428657681951486",
                    "0.95300523476327981",
                    "0.56202755377202562",
                ],
            ),
            (
                12345,
                3,
                [
                    "0.31195095807448947",
                    "0.65201010359872635",
                    "0.045188235211920211",
                    "0.19634002070844275",
                ],
            ),
        ];
        for (seed, stream, values) in want {
            let mut g = Mrg32k3a::ns3_assigned(seed, stream, 1).unwrap();
            for v in values {
                let v: f64 = v.parse().unwrap();
                assert_eq!(g.next_u01().to_bits(), v.to_bits(), "seed {seed} stream {stream}");
            }
        }
    }

    #[test]
    fn advancing_by_steps_equals_drawing_them() {
        // Moving on by 5 x 2^1 = 10 steps must give the state 10 draws give.
        let mut a = Mrg32k3a::new(12345, 0, 0).unwrap();
        for _ in 0..10 {
            a.next_u01();
        }
        let mut b = Mrg32k3a::new(12345, 0, 0).unwrap();
        b.advance(5, 1);
        assert_eq!(a, b);
        // And by 3 x 2^2 = 12 = 10 + 2.
        a.next_u01();
        a.next_u01();
        let mut c = Mrg32k3a::new(12345, 0, 0).unwrap();
        c.advance(3, 2);
        assert_eq!(a, c);
    }

    #[test]
    fn a_bad_seed_is_refused() {
        assert_eq!(Mrg32k3a::new(0, 0, 0), Err(BadSeed(0)));
        assert!(Mrg32k3a::new(M2 as u64, 0, 0).is_err());
        assert!(Mrg32k3a::new(M2 as u64 - 1, 0, 0).is_ok());
    }

    #[test]
    fn draws_are_in_the_unit_interval() {
        let mut g = Mrg32k3a::ns3_assigned(1, 3, 1).unwrap();
        for _ in 0..10_000 {
            let u = g.next_u01();
            assert!((0.0..1.0).contains(&u), "{u}");
        }
    }
}

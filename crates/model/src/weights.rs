//! Weighted targets as one fixed order: which target request *i* goes to.
//!
//! The order is one period of *W* requests, *W* the weights' sum, in which
//! target *t* appears exactly `w[t]` times; request *i* takes position
//! `i mod W`. So every run of *W* consecutive requests holds each target
//! exactly its weight, wherever it starts, and request *i*'s target is a
//! pure function of *i* (shards of one schedule still make one mix).
//!
//! Within the period the shares are spread evenly (stride scheduling): the
//! *k*-th request of a target of weight *w* sits at the midpoint of its
//! share, `(k + ½) / w` of the way through the period, and the positions
//! are those midpoints in order (ties to the target written first). With
//! weights 7:2:1 the period is `0 0 1 0 0 2 0 1 0 0` rather than seven
//! 0s in a row.

use std::{cmp::Reverse, collections::BinaryHeap};

/// The largest sum of weights: the order is held as one `u32` per
/// position (4 MB at this sum).
pub const MAX_WEIGHT_SUM: u64 = 1_000_000;

/// Weights that cannot make an order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct WeightError(pub String);

/// One target's next midpoint, `(2k + 1) / (2w)`, ordered as a fraction
/// (exactly, in integers) and then by the target's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mid {
    num: u64,
    den: u64,
    target: u32,
}

impl Ord for Mid {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.num as u128 * other.den as u128)
            .cmp(&(other.num as u128 * self.den as u128))
            .then(self.target.cmp(&other.target))
    }
}

impl PartialOrd for Mid {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The order of one period for `weights` (target `t` has weight
/// `weights[t]`): `None` when every weight is 1 (plain round-robin needs
/// no table).
pub fn order(weights: &[u32]) -> Result<Option<Vec<u32>>, WeightError> {
    if weights.iter().all(|&w| w == 1) {
        return Ok(None);
    }
    if let Some(t) = weights.iter().position(|&w| w == 0) {
        return Err(WeightError(format!(
            "target {} has weight 0 (a weight is a whole number from 1; leave the target out to send it nothing)",
            t + 1
        )));
    }
    let sum: u64 = weights.iter().map(|&w| w as u64).sum();
    if sum > MAX_WEIGHT_SUM {
        return Err(WeightError(format!(
            "the weights add up to {sum}, more than {MAX_WEIGHT_SUM} (scale them down: only their ratios matter)"
        )));
    }
    let mut heap: BinaryHeap<Reverse<Mid>> = weights
        .iter()
        .enumerate()
        .map(|(t, &w)| {
            Reverse(Mid {
                num: 1,
                den: 2 * w as u64,
                target: t as u32,
            })
        })
        .collect();
    let mut out = Vec::with_capacity(sum as usize);
    while let Some(Reverse(mid)) = heap.pop() {
        out.push(mid.target);
        let next = mid.num + 2;
        if next < mid.den {
            heap.push(Reverse(Mid { num: next, ..mid }));
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_weights_need_no_table() {
        assert_eq!(order(&[1, 1, 1]), Ok(None));
        assert_eq!(order(&[]), Ok(None));
    }

    #[test]
    fn seven_two_one_spread_over_ten() {
        let o = order(&[7, 2, 1]).unwrap().unwrap();
        assert_eq!(o, [0, 0, 1, 0, 0, 2, 0, 1, 0, 0]);
    }

    #[test]
    fn every_window_of_the_sum_holds_each_weight_exactly() {
        for weights in [&[7u32, 2, 1][..], &[3, 5], &[1, 1, 9, 4, 13], &[100, 1]] {
            let o = order(weights).unwrap().unwrap();
            let w = o.len();
            assert_eq!(w as u32, weights.iter().sum::<u32>());
            for start in 0..w {
                let mut counts = vec![0u32; weights.len()];
                for i in start..start + w {
                    counts[o[i % w] as usize] += 1;
                }
                assert_eq!(counts, weights, "window from {start}");
            }
        }
    }

    #[test]
    fn refusals() {
        assert!(order(&[2, 0])
            .unwrap_err()
            .0
            .contains("target 2 has weight 0"));
        let big = order(&[MAX_WEIGHT_SUM as u32, 1]).unwrap_err();
        assert!(big.0.contains("add up to 1000001"), "{big}");
    }
}

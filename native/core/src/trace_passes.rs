//! The plain-Rust part of the mapper's trace-level passes (`otel_oracles.mapping._mapper`,
//! `map_trace`) that the bindings (`native/python/src/passes.rs`) run over a trace's drafts:
//! what a pass decides once the values it needs have been read out of the Python records.
//!
//! - [`common_ancestors`]: the spans around every recognised step (`run_wrappers`: an
//!   application's own span holding the whole run is its wrapper, not a blind spot), over
//!   spans numbered by the binding, each with the number of its parent in the trace.
//! - [`agent_key`]: an agent's name as a handoff tool's name writes it
//!   (`requested_handoffs`: `transfer_to_<agent>` compared with the agent that ran next).

/// The spans that enclose every one of `steps` (each step's span by its number, `None` for
/// a step whose span is not in the trace), by `parent` (a span's number -> its parent's, or
/// `None` when it has no parent in the trace): for each step the chain of its ancestors, up
/// to a span without a parent in the trace or one already in the chain (a parent chain that
/// loops, malformed telemetry, ends where it would repeat; a step on a loop is then among its
/// own ancestors), and what every chain holds. No steps, or a step outside the trace, holds
/// nothing in common. Returns a flag per span.
///
/// Linear in the spans and steps whatever the shape: what every chain holds is a tail of the
/// first step's chain (from where the loop starts when it ends on one), so each other step
/// only needs the first span of that chain its own chain reaches, and that is remembered
/// for every span walked off it. Walking each step's whole chain (and sweeping every span
/// per step) cost the square of a deep or wide trace.
pub fn common_ancestors(steps: &[Option<usize>], parent: &[Option<usize>]) -> Vec<bool> {
    const NOT: usize = usize::MAX; // off the first chain / not known yet
    const WALKING: usize = usize::MAX - 1; // on the walk under way
    const NOWHERE: usize = usize::MAX - 2; // reaches no span of the first chain
    let nothing = || vec![false; parent.len()];
    let Some(&Some(first)) = steps.first() else {
        return nothing();
    };
    if steps.iter().any(Option::is_none) {
        return nothing();
    }
    // The first step's chain, nearest first, and each span's place in it.
    let mut place = vec![NOT; parent.len()];
    let mut chain: Vec<usize> = Vec::new();
    let mut at = parent[first];
    while let Some(i) = at {
        if place[i] != NOT {
            break;
        }
        place[i] = chain.len();
        chain.push(i);
        at = parent[i];
    }
    // From a span on the loop the walk goes round it all: the loop starts here.
    let loop_start = at.map_or(chain.len(), |i| place[i]);
    let mut reach = vec![NOT; parent.len()];
    let mut walked: Vec<usize> = Vec::new();
    let mut cut = 0; // what every chain so far holds: chain[cut..]
    for step in steps[1..].iter().flatten() {
        let mut at = parent[*step];
        let found = loop {
            let Some(i) = at else { break NOWHERE };
            if place[i] != NOT {
                break place[i];
            }
            match reach[i] {
                NOT => {
                    reach[i] = WALKING;
                    walked.push(i);
                    at = parent[i];
                }
                WALKING => break NOWHERE, // a loop that never meets the first chain
                known => break known,
            }
        };
        for i in walked.drain(..) {
            reach[i] = found;
        }
        if found == NOWHERE {
            return nothing();
        }
        cut = cut.max(found.min(loop_start));
    }
    let mut common = nothing();
    for &i in chain.get(cut..).unwrap_or_default() {
        common[i] = true;
    }
    common
}

/// An agent's name as a tool name writes it (`_agent_key`): `lowered` is the name already
/// lower-cased (Python's `str.lower`, which the binding applies to a name that is not ASCII:
/// its full case mappings are Python's), every run of characters other than ASCII letters
/// and digits becomes one `_`, and `_` at either end is stripped (the OpenAI Agents SDK's
/// handoff tool names: `transfer_to_billing_agent` for `Billing Agent`).
pub fn agent_key(lowered: &str) -> String {
    let mut out = String::with_capacity(lowered.len());
    let mut gap = false;
    for c in lowered.chars() {
        if c.is_ascii_digit() || c.is_ascii_lowercase() {
            if gap && !out.is_empty() {
                out.push('_');
            }
            gap = false;
            out.push(c);
        } else {
            gap = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_keys_join_words_with_one_underscore() {
        assert_eq!(agent_key("billing agent"), "billing_agent");
        assert_eq!(agent_key("  billing -- agent  "), "billing_agent");
        assert_eq!(agent_key("__triage__"), "triage");
        assert_eq!(agent_key("agent_2"), "agent_2");
        assert_eq!(agent_key("café bot"), "caf_bot");
        assert_eq!(agent_key("Upper"), "pper"); // the binding lowers first
        assert_eq!(agent_key("___"), "");
        assert_eq!(agent_key(""), "");
    }

    #[test]
    fn the_wrapper_encloses_every_step() {
        // 0 <- 1 <- 2, 1 <- 3; 4 stands alone.
        let parent = [None, Some(0), Some(1), Some(1), None];
        let common = common_ancestors(&[Some(2), Some(3)], &parent);
        assert_eq!(common, [true, true, false, false, false]);
        // A step at the top shares nothing with the others.
        assert_eq!(common_ancestors(&[Some(2), Some(0)], &parent), [false; 5]);
        // A span not in the trace, or no steps, holds nothing in common.
        assert_eq!(common_ancestors(&[Some(2), None], &parent), [false; 5]);
        assert_eq!(common_ancestors(&[], &parent), [false; 5]);
        // One step: all its ancestors.
        assert_eq!(
            common_ancestors(&[Some(3)], &parent),
            [true, true, false, false, false]
        );
    }

    #[test]
    fn common_ancestors_agree_with_the_walk_per_step() {
        // Every parent map of up to 5 spans (each a parent or none) and every pair and
        // triple of steps, against the definition: each step's whole chain, intersected.
        fn chain(start: usize, parent: &[Option<usize>]) -> Vec<bool> {
            let mut held = vec![false; parent.len()];
            let mut at = parent[start];
            while let Some(i) = at {
                if held[i] {
                    break;
                }
                held[i] = true;
                at = parent[i];
            }
            held
        }
        for n in 1..=5usize {
            let maps = (n + 1).pow(n as u32);
            for code in 0..maps {
                let parent: Vec<Option<usize>> = (0..n)
                    .map(|i| match (code / (n + 1).pow(i as u32)) % (n + 1) {
                        0 => None,
                        p => Some(p - 1),
                    })
                    .collect();
                for a in 0..n {
                    for b in 0..n {
                        for c in [None, Some(0), Some(n - 1)] {
                            let mut steps = vec![Some(a), Some(b)];
                            steps.extend(c.map(Some));
                            let mut want = vec![true; n];
                            for s in steps.iter().flatten() {
                                for (w, h) in want.iter_mut().zip(chain(*s, &parent)) {
                                    *w &= h;
                                }
                            }
                            assert_eq!(
                                common_ancestors(&steps, &parent),
                                want,
                                "{parent:?} {steps:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn common_ancestors_of_a_deep_chain_are_linear() {
        // 200,000 spans in one chain, a step at every one: the walk per step took the
        // square (2 * 10^10 hops); each span is walked once now.
        let n: usize = 200_000;
        let parent: Vec<Option<usize>> = (0..n).map(|i| i.checked_sub(1)).collect();
        let steps: Vec<Option<usize>> = (0..n).rev().map(Some).collect();
        assert_eq!(common_ancestors(&steps, &parent), vec![false; n]);
        let steps: Vec<Option<usize>> = (1..n).rev().map(Some).collect();
        let common = common_ancestors(&steps, &parent);
        assert!(common[0] && common.iter().filter(|c| **c).count() == 1);
    }

    #[test]
    fn a_looping_parent_chain_ends_where_it_would_repeat() {
        // 0 -> 1 -> 2 -> 0: each step is among its own ancestors.
        let parent = [Some(1), Some(2), Some(0)];
        assert_eq!(common_ancestors(&[Some(0)], &parent), [true, true, true]);
        assert_eq!(
            common_ancestors(&[Some(0), Some(2)], &parent),
            [true, true, true]
        );
        // A self-loop.
        assert_eq!(common_ancestors(&[Some(0)], &[Some(0)]), [true]);
    }
}

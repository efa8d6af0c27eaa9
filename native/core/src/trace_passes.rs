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
pub fn common_ancestors(steps: &[Option<usize>], parent: &[Option<usize>]) -> Vec<bool> {
    let mut common = vec![false; parent.len()];
    let mut count = 0usize;
    let mut chain = vec![false; parent.len()];
    let mut walked: Vec<usize> = Vec::new();
    for (n, step) in steps.iter().enumerate() {
        let Some(start) = *step else {
            return vec![false; parent.len()];
        };
        for &i in &walked {
            chain[i] = false;
        }
        walked.clear();
        let mut at = parent[start];
        while let Some(i) = at {
            if chain[i] {
                break;
            }
            chain[i] = true;
            walked.push(i);
            at = parent[i];
        }
        if n == 0 {
            for &i in &walked {
                common[i] = true;
            }
            count = walked.len();
        } else {
            for (i, held) in common.iter_mut().enumerate() {
                if *held && !chain[i] {
                    *held = false;
                    count -= 1;
                }
            }
        }
        if count == 0 {
            return vec![false; parent.len()];
        }
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

//! Rule 1: no module cycle longer than two files.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::allow::matches;

/// The strongly connected sets of more than two files that hold a cycle longer than two
/// files (a set made only of file-and-file pairs that import each other, in a chain or star,
/// has none), each sorted.
pub(crate) fn long_cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for component in components(graph) {
        if component.len() < 3 {
            continue;
        }
        let members: BTreeSet<&String> = component.iter().collect();
        let mut mutual_pairs = 0;
        let mut one_way = false;
        for from in &component {
            for to in graph[from].iter().filter(|t| members.contains(t)) {
                if graph[to].contains(from) {
                    if from < to {
                        mutual_pairs += 1;
                    }
                } else {
                    one_way = true;
                }
            }
        }
        if one_way || mutual_pairs != component.len() - 1 {
            out.push(component);
        }
    }
    out.sort();
    out
}

/// Tarjan's strongly connected components.
fn components(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        let graph = s.graph;
        for w in graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            component.sort();
            s.out.push(component);
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.out
}

/// `graph` without the crate root and the arrows to it.
pub(crate) fn rootless(
    graph: &BTreeMap<String, BTreeSet<String>>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph = graph.clone();
    graph.remove("lib.rs");
    for targets in graph.values_mut() {
        targets.remove("lib.rs");
    }
    graph
}

/// Reports every cycle of `graph` that no entry of `allowed` (the list named `list`) covers,
/// and every entry, or prefix of one, that no longer covers a cycle.
pub(crate) fn check_cycles(
    graph: &BTreeMap<String, BTreeSet<String>>,
    allowed: &[(&[&str], &str)],
    list: &str,
    problems: &mut String,
) {
    let found = long_cycles(graph);
    let covers = |prefixes: &[&str], cycle: &[String]| {
        cycle
            .iter()
            .all(|file| prefixes.iter().any(|p| matches(file, p)))
    };
    for cycle in &found {
        if !allowed.iter().any(|(prefixes, _)| covers(prefixes, cycle)) {
            let _ = writeln!(
                problems,
                "- a module cycle of {} files (not in {list}): {:?}",
                cycle.len(),
                cycle
            );
        }
    }
    for (prefixes, _) in allowed {
        let covered: Vec<&Vec<String>> = found.iter().filter(|c| covers(prefixes, c)).collect();
        if covered.is_empty() {
            let _ = writeln!(
                problems,
                "- the allowed cycle {prefixes:?} no longer exists: remove it from {list}"
            );
            continue;
        }
        for prefix in *prefixes {
            if !covered.iter().any(|c| c.iter().any(|f| matches(f, prefix))) {
                let _ = writeln!(
                    problems,
                    "- {prefix} is no longer part of a cycle it is allowed in: remove it from {list}"
                );
            }
        }
    }
}

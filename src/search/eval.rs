//! How well search finds the tools a set of queries expects, in the measures retrieval is
//! judged by: hit@k (the share of queries with an expected tool among the first k) and MRR@10
//! (the mean of 1/rank of the first expected tool, 0 past rank 10).

use serde::{Deserialize, Serialize};

use super::SearchIndex;

/// One line of an evaluation file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub query: String,
    pub expected: Vec<Expected>,
}

/// A tool a query should find; `name` is its name or its alias.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    pub toolbox: String,
    pub server: String,
    pub name: String,
}

/// The measures over every case as search ranks (by words and meaning, unless the config
/// turns meaning off), the cases that missed the first five, and the measures by words alone.
#[derive(Debug, Serialize)]
pub struct Evaluation {
    #[serde(flatten)]
    pub figures: Figures,
    pub misses: Vec<Miss>,
    /// The same queries ranked by words alone, when search ranks by meaning too: what meaning
    /// adds is the difference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub words_only: Option<Figures>,
}

/// hit@1, hit@3, hit@5 and MRR@10 over a set of queries.
#[derive(Debug, Serialize)]
pub struct Figures {
    pub queries: usize,
    #[serde(rename = "hit@1")]
    pub hit_1: f64,
    #[serde(rename = "hit@3")]
    pub hit_3: f64,
    #[serde(rename = "hit@5")]
    pub hit_5: f64,
    #[serde(rename = "mrr@10")]
    pub mrr_10: f64,
}

/// A query whose expected tools were not among the first five.
#[derive(Debug, Serialize)]
pub struct Miss {
    pub query: String,
    pub expected: Vec<Expected>,
    /// Where the first expected tool ranked (past 5, up to 10), if it did.
    pub rank: Option<usize>,
    /// What came first instead, as `toolbox/server/name`.
    pub found: Vec<String>,
    /// Expected tools the remembered catalog does not hold at all.
    pub not_in_catalog: Vec<Expected>,
}

/// Searches each case's query and scores where its expected tools came.
pub fn evaluate(index: &SearchIndex, cases: &[Case]) -> Evaluation {
    let mut misses = Vec::new();
    let ranked = figures(index, cases, true, Some(&mut misses));
    Evaluation {
        figures: ranked,
        misses,
        words_only: index
            .has_meaning()
            .then(|| figures(index, cases, false, None)),
    }
}

/// The figures of `cases` ranked with or without `meaning`; the misses pushed to `misses`.
fn figures(
    index: &SearchIndex,
    cases: &[Case],
    meaning: bool,
    mut misses: Option<&mut Vec<Miss>>,
) -> Figures {
    let mut hits = [0usize; 3];
    let mut reciprocal = 0.0;
    for case in cases {
        let found = index.rank(&case.query, 10, |_| true, meaning);
        let rank = found
            .iter()
            .position(|found| {
                case.expected
                    .iter()
                    .any(|expected| found.entry.is(expected))
            })
            .map(|at| at + 1);
        for (hit, k) in hits.iter_mut().zip([1, 3, 5]) {
            if rank.is_some_and(|rank| rank <= k) {
                *hit += 1;
            }
        }
        if let Some(rank) = rank {
            reciprocal += 1.0 / rank as f64;
        }
        if let Some(misses) = misses.as_deref_mut()
            && rank.is_none_or(|rank| rank > 5)
        {
            misses.push(Miss {
                query: case.query.clone(),
                expected: case.expected.clone(),
                rank,
                found: found
                    .iter()
                    .take(3)
                    .map(|found| {
                        let entry = found.entry;
                        format!("{}/{}/{}", entry.toolbox, entry.server, entry.name)
                    })
                    .collect(),
                not_in_catalog: case
                    .expected
                    .iter()
                    .filter(|expected| !index.holds(expected))
                    .cloned()
                    .collect(),
            });
        }
    }
    let share = |count: usize| match cases.is_empty() {
        true => 0.0,
        false => count as f64 / cases.len() as f64,
    };
    Figures {
        queries: cases.len(),
        hit_1: share(hits[0]),
        hit_3: share(hits[1]),
        hit_5: share(hits[2]),
        mrr_10: match cases.is_empty() {
            true => 0.0,
            false => reciprocal / cases.len() as f64,
        },
    }
}

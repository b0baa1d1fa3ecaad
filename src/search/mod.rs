//! Ranked search over the tools the persisted catalog remembers: which tool does what the agent
//! or user describes, across every toolbox, without starting a server. Each tool is a document
//! of weighted fields (name, alias, description, parameters, server, toolbox, tags); the score
//! is BM25 over the weighted term counts (BM25F), so a word in a tool's name counts more than
//! the same word in a parameter's description, plus what the tool means beside the query
//! (`meaning`, `fusion`). The index lives in memory; nothing new is kept on disk.

mod eval;
mod fusion;
mod meaning;
mod remembered;
mod session;
mod tokens;
mod wordpiece;

use std::collections::HashMap;

pub use eval::{Case, Evaluation, Figures, evaluate};
pub use remembered::{Catalog, remembered};
pub(crate) use session::SessionSearch;

/// One tool, as search reads it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub toolbox: String,
    pub server: String,
    /// The name the agent calls it by: the alias when there is one.
    pub name: String,
    /// The name the server lists it under.
    pub canonical: String,
    pub description: String,
    /// Text in each field, with the field's weight; emptied once indexed.
    fields: Vec<(f32, String)>,
}

/// How much a term in each field counts: a word in the name says most. Tuned on the tuning
/// part of benches/search's public queries (docs/search.md), where the spread between
/// reasonable weights is small (MRR@10 0.68–0.70) next to what stemming and stop words gained
/// (0.665 → 0.697).
const NAME: f32 = 3.0;
const DESCRIPTION: f32 = 1.0;
const PARAMETERS: f32 = 0.5;
const PLACE: f32 = 0.5;
const TAGS: f32 = 1.5;

/// BM25's term-frequency saturation and length normalisation (tool descriptions vary from a
/// few words to paragraphs: length counts nearly in full).
const K1: f32 = 1.2;
const B: f32 = 0.9;

/// A match: an entry of the index and its score.
#[derive(Debug, Clone)]
pub struct Found<'a> {
    pub entry: &'a Entry,
    pub score: f32,
}

/// The searchable tools.
pub struct SearchIndex {
    entries: Vec<Entry>,
    /// term → (entry, weighted count of the term in it)
    postings: HashMap<String, Vec<(u32, f32)>>,
    lengths: Vec<f32>,
    average_length: f32,
    /// Each entry's embedding, one after the other (zero where no word of it is known); none
    /// when the config turns the meaning score off.
    vectors: Option<Vec<f32>>,
}

impl Entry {
    pub(crate) fn new(toolbox: &str, server: &str, tool: &crate::catalog::CatalogTool) -> Entry {
        let name = tool.alias.clone().unwrap_or_else(|| tool.name().to_owned());
        let description = tool
            .description
            .clone()
            .or_else(|| tool.tool.description.as_deref().map(str::to_owned))
            .unwrap_or_default();
        let mut parameters = String::new();
        if let Some(properties) = tool
            .tool
            .input_schema
            .get("properties")
            .and_then(|p| p.as_object())
        {
            for (key, schema) in properties {
                parameters.push_str(key);
                parameters.push(' ');
                if let Some(text) = schema.get("description").and_then(|d| d.as_str()) {
                    parameters.push_str(text);
                    parameters.push(' ');
                }
            }
        }
        let fields = vec![
            (NAME, format!("{} {name}", tool.name())),
            (
                DESCRIPTION,
                format!("{} {description}", tool.title.clone().unwrap_or_default()),
            ),
            (PARAMETERS, parameters),
            (PLACE, format!("{toolbox} {server}")),
            (TAGS, tool.tags.join(" ")),
        ];
        Entry {
            toolbox: toolbox.to_owned(),
            server: server.to_owned(),
            canonical: tool.name().to_owned(),
            name,
            description,
            fields,
        }
    }
}

impl Entry {
    /// True when `expected` names this tool, by its name or its alias.
    fn is(&self, expected: &eval::Expected) -> bool {
        self.toolbox == expected.toolbox
            && self.server == expected.server
            && (self.name == expected.name || self.canonical == expected.name)
    }
}

impl SearchIndex {
    /// True when the index holds the tool `expected` names.
    fn holds(&self, expected: &eval::Expected) -> bool {
        self.entries.iter().any(|entry| entry.is(expected))
    }

    /// The index of `entries`; with `meaning`, their embeddings too (`search.meaning`).
    pub fn build(mut entries: Vec<Entry>, meaning: bool) -> SearchIndex {
        let vectors = meaning.then(|| fusion::embed_entries(&entries));
        // Catalogs repeat their words: each distinct word is stemmed once, and counted by the
        // number of its term (`slot`) rather than by its text.
        let mut slots: HashMap<String, Option<usize>> = HashMap::new();
        let mut vocabulary: Vec<(String, Vec<(u32, f32)>)> = Vec::new();
        let mut by_term: HashMap<String, usize> = HashMap::new();
        let mut lengths = Vec::with_capacity(entries.len());
        let mut counts: Vec<(usize, f32)> = Vec::new();
        for (at, entry) in entries.iter_mut().enumerate() {
            counts.clear();
            let mut length = 0.0;
            for (weight, text) in std::mem::take(&mut entry.fields) {
                tokens::words(&text, |word| {
                    let slot = match slots.get(word) {
                        Some(slot) => *slot,
                        None => {
                            let slot = tokens::term(word).map(|term| {
                                let next = vocabulary.len();
                                *by_term.entry(term.clone()).or_insert_with(|| {
                                    vocabulary.push((term, Vec::new()));
                                    next
                                })
                            });
                            slots.insert(word.to_owned(), slot);
                            slot
                        }
                    };
                    let Some(slot) = slot else {
                        return;
                    };
                    match counts.iter_mut().find(|(counted, _)| *counted == slot) {
                        Some((_, count)) => *count += weight,
                        None => counts.push((slot, weight)),
                    }
                    length += weight;
                });
            }
            lengths.push(length);
            for &(slot, count) in &counts {
                vocabulary[slot].1.push((at as u32, count));
            }
        }
        let average_length = match lengths.is_empty() {
            true => 1.0,
            false => lengths.iter().sum::<f32>() / lengths.len() as f32,
        };
        SearchIndex {
            entries,
            postings: vocabulary.into_iter().collect(),
            lengths,
            average_length: average_length.max(1.0),
            vectors,
        }
    }

    /// Every tool of the index, in the catalog's order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The `limit` best matches of `query`, best first; ties keep the catalog's order.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Found<'_>> {
        self.search_where(query, limit, |_| true)
    }

    /// True when `query` holds a word search can match on.
    pub fn has_terms(query: &str) -> bool {
        !tokens::terms(query).is_empty()
    }

    /// As `search`, among the entries `keep` accepts.
    pub fn search_where(
        &self,
        query: &str,
        limit: usize,
        keep: impl Fn(&Entry) -> bool,
    ) -> Vec<Found<'_>> {
        self.rank(query, limit, keep, true)
    }

    /// True when the index ranks by meaning as well as by words.
    pub fn has_meaning(&self) -> bool {
        self.vectors.is_some()
    }

    /// As `search_where`; by words alone unless `meaning` (and the index has embeddings).
    fn rank(
        &self,
        query: &str,
        limit: usize,
        keep: impl Fn(&Entry) -> bool,
        meaning: bool,
    ) -> Vec<Found<'_>> {
        let mut terms = tokens::terms(query);
        terms.sort();
        terms.dedup();
        let count = self.entries.len() as f32;
        let mut scores = vec![0.0_f32; self.entries.len()];
        for term in &terms {
            let Some(posting) = self.postings.get(term) else {
                continue;
            };
            let having = posting.len() as f32;
            let idf = (1.0 + (count - having + 0.5) / (having + 0.5)).ln();
            for &(at, weighted) in posting {
                let length = self.lengths[at as usize] / self.average_length;
                let saturated = weighted * (K1 + 1.0) / (weighted + K1 * (1.0 - B + B * length));
                scores[at as usize] += idf * saturated;
            }
        }
        let scores = match &self.vectors {
            Some(vectors) if meaning => fusion::fuse(scores, vectors, query),
            _ => scores,
        };
        let mut found: Vec<(usize, f32)> = scores
            .into_iter()
            .enumerate()
            .filter(|(at, score)| *score > 0.0 && keep(&self.entries[*at]))
            .collect();
        found.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        found
            .into_iter()
            .take(limit)
            .map(|(at, score)| Found {
                entry: &self.entries[at],
                score,
            })
            .collect()
    }
}

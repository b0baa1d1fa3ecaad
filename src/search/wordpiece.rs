//! Words into the ids of the search model's vocabulary, as BERT's WordPiece splits them: the
//! longest piece of the word the vocabulary holds, then the longest of what is left (written
//! `##piece` in the vocabulary), and so on; a word with a part no piece covers is unknown and
//! adds nothing. Accents are stripped first, as the model's tokenizer strips them ("café" is
//! "cafe"). `search::tokens::words` has already split and lowercased the text.

use std::collections::HashMap;

use foldhash::fast::RandomState;
use unicode_normalization::{UnicodeNormalization, char::is_combining_mark};

/// Longer words are unknown to BERT's tokenizer too.
const LONGEST_WORD: usize = 100;

/// The vocabulary, split in the pieces that start a word and those that continue one.
pub(super) struct Vocabulary {
    starts: HashMap<&'static str, u32, RandomState>,
    continues: HashMap<&'static str, u32, RandomState>,
}

impl Vocabulary {
    /// The vocabulary of `text`: one token a line, the line's number its id.
    pub(super) fn new(text: &'static str) -> Vocabulary {
        let mut starts = HashMap::with_hasher(RandomState::default());
        let mut continues = HashMap::with_hasher(RandomState::default());
        for (id, token) in text.lines().enumerate() {
            match token.strip_prefix("##") {
                Some(rest) if !rest.is_empty() => continues.insert(rest, id as u32),
                _ => starts.insert(token, id as u32),
            };
        }
        Vocabulary { starts, continues }
    }

    /// The number of tokens.
    pub(super) fn len(&self) -> usize {
        self.starts.len() + self.continues.len()
    }

    /// Calls `each` with the id of every piece of `word` (lowercased), or with none when the
    /// vocabulary cannot spell it.
    pub(super) fn pieces(&self, word: &str, each: impl FnMut(u32)) {
        if word.is_ascii() {
            self.split(word, each);
        } else {
            let plain: String = word.nfd().filter(|c| !is_combining_mark(*c)).collect();
            self.split(&plain, each);
        }
    }

    fn split(&self, word: &str, mut each: impl FnMut(u32)) {
        if let Some(&id) = self.starts.get(word) {
            return each(id);
        }
        if word.chars().count() > LONGEST_WORD {
            return;
        }
        let mut ids: Vec<u32> = Vec::new();
        let mut start = 0;
        while start < word.len() {
            let table = match start {
                0 => &self.starts,
                _ => &self.continues,
            };
            let rest = &word[start..];
            let found = rest
                .char_indices()
                .map(|(at, c)| at + c.len_utf8())
                .rev()
                .find_map(|end| table.get(&rest[..end]).map(|&id| (end, id)));
            let Some((end, id)) = found else {
                return;
            };
            ids.push(id);
            start += end;
        }
        ids.into_iter().for_each(each);
    }
}

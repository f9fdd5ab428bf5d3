//! A content-addressed response cache on disk: the key is a SHA-256 of the model name and the request (never
//! headers or keys), the value the response. `record` answers from the cache when it can and stores new
//! responses; `replay` answers only from the cache, so a recorded run replays without any network.

use crate::error::LlmError;
use crate::types::{ChatRequest, ChatResponse};
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::str::FromStr;

/// How the cache is used (`--cache`; stored with a run's arguments by the same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheMode {
    /// No cache.
    Off,
    /// Read hits, store misses.
    Record,
    /// Read only; a miss is an error and nothing is sent.
    Replay,
}

impl FromStr for CacheMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "off" => Ok(CacheMode::Off),
            "record" => Ok(CacheMode::Record),
            "replay" => Ok(CacheMode::Replay),
            other => Err(format!(
                "unknown cache mode `{other}`: expected record, replay or off"
            )),
        }
    }
}

/// The cache directory and mode.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
    mode: CacheMode,
}

impl Cache {
    /// A cache in `dir`.
    pub fn new(dir: impl Into<PathBuf>, mode: CacheMode) -> Cache {
        Cache {
            dir: dir.into(),
            mode,
        }
    }

    /// The mode.
    pub fn mode(&self) -> CacheMode {
        self.mode
    }

    /// The key of a request to a model.
    pub fn key(model: &str, req: &ChatRequest) -> String {
        let mut h = Sha256::new();
        h.update(model.as_bytes());
        h.update([0]);
        h.update(serde_json::to_vec(req).unwrap_or_default());
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    /// A cached response, if any.
    pub fn get(&self, key: &str) -> Option<ChatResponse> {
        if self.mode == CacheMode::Off {
            return None;
        }
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Stores a response (record mode only). Written to a temporary file and renamed, so a crash never leaves
    /// a half-written entry.
    pub fn put(&self, key: &str, resp: &ChatResponse) -> Result<(), LlmError> {
        if self.mode != CacheMode::Record {
            return Ok(());
        }
        let path = self.path(key);
        let io = |e: std::io::Error| {
            LlmError::Config(format!("response cache {}: {e}", self.dir.display()))
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, serde_json::to_vec(resp).unwrap_or_default()).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)
    }
}

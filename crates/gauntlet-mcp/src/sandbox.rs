//! The sandbox behind MCP: a case's world behind the gateway (defense, world, injection, log), one episode
//! shared by every client of the server.

use crate::{Backend, CallFuture, ToolInfo, ToolOutput};
use gauntlet_core::GatewayEvent;
use gauntlet_gateway::Gateway;
use std::io::Write;
use std::sync::Mutex;

/// A gateway served over MCP. Calls are mediated one at a time, in arrival order, and each event is appended
/// to the log file (JSON lines) as it happens.
pub struct SandboxBackend {
    gateway: Mutex<Gateway>,
    log: Mutex<Option<Box<dyn Write + Send>>>,
    /// The tools the gateway offers, listed to every client.
    tools: Vec<ToolInfo>,
}

impl SandboxBackend {
    /// A backend over `gateway`, logging each event to `log` if given.
    pub fn new(gateway: Gateway, log: Option<Box<dyn Write + Send>>) -> SandboxBackend {
        let tools = gateway.tools().iter().map(ToolInfo::from).collect();
        SandboxBackend {
            gateway: Mutex::new(gateway),
            log: Mutex::new(log),
            tools,
        }
    }

    /// Looks at the gateway (its world and its log), for the final verdict.
    pub fn with_gateway<R>(&self, f: impl FnOnce(&Gateway) -> R) -> Option<R> {
        self.gateway.lock().ok().map(|g| f(&g))
    }

    fn record(&self, e: &GatewayEvent) {
        if let Ok(mut log) = self.log.lock()
            && let Some(w) = log.as_mut()
        {
            // A log that cannot be written must not take the sandbox down; the event stays in the gateway.
            let _ = serde_json::to_writer(&mut *w, e)
                .map_err(std::io::Error::from)
                .and_then(|_| w.write_all(b"\n"))
                .and_then(|_| w.flush());
        }
    }
}

impl Backend for SandboxBackend {
    fn tools(&self) -> Vec<ToolInfo> {
        self.tools.clone()
    }

    fn call(&self, tool: String, args: serde_json::Value) -> CallFuture<'_> {
        let out = match self.gateway.lock() {
            Ok(mut gw) => {
                let e = gw.call(&tool, args).clone();
                self.record(&e);
                ToolOutput::new(e.observed, e.error.is_some())
            }
            Err(_) => ToolOutput::new(
                serde_json::json!({"error": "the gateway failed earlier (poisoned lock)"}),
                true,
            ),
        };
        Box::pin(std::future::ready(out))
    }
}

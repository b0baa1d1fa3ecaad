//! One tool as its server listed it, with what rmcp's `Tool` drops (`execution`).

use rmcp::model::Tool;
use serde::Deserialize;
use serde_json::value::RawValue;

/// One tool as its server listed it.
#[derive(Debug, Clone)]
pub(crate) struct ListedTool {
    pub tool: Tool,
    /// The tool's `execution` object, as the server wrote it.
    pub execution: Option<Box<RawValue>>,
}

impl ListedTool {
    /// One tool of a `tools/list` result as the server wrote it (or as the persisted catalog
    /// kept it).
    pub(crate) fn read(raw: &RawValue) -> Result<ListedTool, String> {
        #[derive(Deserialize)]
        struct Extra {
            #[serde(default)]
            execution: Option<Box<RawValue>>,
        }
        let tool: Tool = serde_json::from_str(raw.get())
            .map_err(|error| format!("a tool in the tools/list result does not read: {error}"))?;
        let extra: Extra = serde_json::from_str(raw.get()).map_err(|error| error.to_string())?;
        let execution = extra
            .execution
            .filter(|execution| execution.get().starts_with('{'));
        Ok(ListedTool { tool, execution })
    }

    /// The tool as JSON again, `execution` included: what the persisted catalog keeps.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        let mut json = serde_json::to_value(&self.tool).unwrap_or_default();
        if let (Some(object), Some(execution)) = (json.as_object_mut(), &self.execution)
            && let Ok(execution) = serde_json::from_str(execution.get())
        {
            object.insert("execution".into(), execution);
        }
        json
    }
}

impl From<Tool> for ListedTool {
    fn from(tool: Tool) -> Self {
        Self {
            tool,
            execution: None,
        }
    }
}

// A child for toolshelf's tests, written with the official TypeScript MCP SDK (the version
// server-everything pins): tool `count` runs as a 2025-11-25 task and reports its progress under
// the call's progress token after the CreateTaskResult has gone out, as the tasks section allows,
// then completes. Run with NODE_PATH naming the interop node_modules.
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const {
  InMemoryTaskStore,
  InMemoryTaskMessageQueue,
} = require("@modelcontextprotocol/sdk/experimental/tasks");
const { z } = require("zod");

const taskStore = new InMemoryTaskStore();
const server = new McpServer(
  { name: "task-progress", version: "1.0.0" },
  {
    capabilities: {
      tools: {},
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    },
    taskStore,
    taskMessageQueue: new InMemoryTaskMessageQueue(),
  },
);

server.experimental.tasks.registerToolTask(
  "count",
  {
    description: "Counts to `to` as a task, reporting each step as progress after the task was created",
    inputSchema: { to: z.number() },
    execution: { taskSupport: "required" },
  },
  {
    createTask: async ({ to }, extra) => {
      const task = await extra.taskStore.createTask({ ttl: 60000, pollInterval: 100 });
      const token = extra._meta && extra._meta.progressToken;
      (async () => {
        // After the CreateTaskResult is written.
        await new Promise((resolve) => setTimeout(resolve, 50));
        for (let step = 1; step <= to; step++) {
          if (token !== undefined) {
            await extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken: token, progress: step, total: to },
            });
          }
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await extra.taskStore.storeTaskResult(task.taskId, "completed", {
          content: [{ type: "text", text: `counted to ${to}` }],
        });
      })().catch((error) => console.error(error));
      return { task };
    },
    getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId),
  },
);

server.connect(new StdioServerTransport());

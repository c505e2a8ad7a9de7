// The public SDK (`rein`): what a user of the SDK needs, nothing more. Listed export by export in
// docs/api.md; api/ holds the committed report of these names (`npm run api:report` regenerates both).
// The CLI and the server also use internals, through src/internal.ts (never exported by the package).

// Harness and agents.
export { createHarness } from './harness.ts';
export type { Harness, HarnessOptions } from './harness.ts';
export { createReinHarness } from './app-harness.ts';
export type { ReinHarness, ReinHarnessOptions, ModelRoute } from './app-harness.ts';
export type { ReinWarning, ReinWarningCode, ReinWarningSource } from './rein-warning.ts';
export type {
  Agent,
  AgentOptions,
  AgentStatus,
  AgentCancelCause,
  MessageInput,
  InboxTarget,
} from './agent/agent.ts';
export type { AgentRegistry } from './agent/agent-registry.ts';
export type { Inbox } from './agent/inbox.ts';
export type { HarnessPlugin, PluginHost } from './agent/harness-plugin.ts';
export type { AgentDriver, AgentServices } from './agent/agent-services.ts';
export { enter, reject } from './agent/agent.ts';
export type { PreStepDecision } from './agent/agent.ts';

// Hooks.
export type { HookBus, Disposer, ListenOptions, HookScope, ListenerErrorReporter } from './hooks/hook-bus.ts';
export type {
  DispatchMode,
  HookEventMap,
  HookEventName,
  PayloadOf,
  ResultOf,
  ListenerOf,
  EmitEvent,
  SerialEvent,
  WaterfallEvent,
} from './hooks/hook-event-map.ts';

// Messages and models.
export type {
  Message,
  UserMessage,
  AssistantMessage,
  ToolResultMessage,
  MessageSource,
  ContentBlock,
  TextBlock,
  ImageBlock,
  ReasoningBlock,
  ToolCallBlock,
  ToolResultBlock,
} from './llm/message.ts';
export {
  createUserMessage,
  createAssistantMessage,
  createToolResultMessage,
  messageText,
} from './llm/message.ts';
export {
  acceptsImages,
  checkImageContent,
  imageMediaTypes,
  maxMessageImageBytes,
} from './llm/image-content.ts';
export type { LlmAdapter, LlmService } from './llm/llm-service.ts';
export type { LlmRequest, LlmCallConfig, ModelInfo, ToolSchema, JsonSchema } from './llm/llm-request.ts';
export type { RetryPolicy } from './llm/retry-policy.ts';
export type { StreamChunk, BlockType, FinishReason, TokenUsage } from './llm/stream-chunk.ts';
export { HarnessError, LlmError } from './llm/llm-error.ts';
export type { LlmErrorCode, LlmFailure } from './llm/llm-error.ts';

// Session log and stores.
export type { Session, SessionHeader, AppendOptions, SessionEventPayload } from './session/session.ts';
export type { SessionLog, ReadonlySessionLog } from './session/session-log.ts';
export { isDurableEvent, isEventOfType, registerSessionEventTypes } from './session/session-event.ts';
export type {
  DurableEvent,
  SessionEvent,
  AnySessionEvent,
  SessionEventMap,
  SessionEventType,
  TurnEndReason,
  EpochHeader,
} from './session/session-event.ts';
export type {
  SessionStore,
  SessionSummary,
  SessionForkOptions,
  PricingLookup,
  StoredSessionLog,
} from './session/session-store.ts';
export type { LogScanStates, SavedLogScan } from './session/log-scan-states.ts';
export { DiskSessionStore } from './session/stores/disk-session-store.ts';
export type { DiskSessionStoreOptions } from './session/stores/disk-session-store.ts';
export type { SessionDurability } from './session/stores/session-file-writer.ts';
export { MemorySessionStore } from './session/stores/memory-session-store.ts';
export { SessionError } from './session/session-error.ts';
export type { SessionErrorCode } from './session/session-error.ts';

// System prompt.
export type {
  SystemPromptAssembler,
  PromptSection,
  PromptSectionProvider,
  PromptContext,
} from './prompt/system-prompt.ts';
export { agentsMdPlugin } from './prompt/agents-md.ts';
export type { AgentsMdOptions } from './prompt/agents-md.ts';

// Tools and approvals.
export { defineTool } from './tools/tool.ts';
export type {
  Tool,
  ToolContext,
  ToolEffect,
  ToolExecutionMode,
  ToolOutput,
  ZodLikeSchema,
} from './tools/tool.ts';
export { ToolError } from './tools/tool-error.ts';
export type { ToolErrorCode } from './tools/tool-error.ts';
export type { ToolRegistry, ToolSelection } from './tools/tool-registry.ts';
export type { ToolPipeline, ToolCallInfo, PreToolDecision, PostToolDecision } from './tools/tool-pipeline.ts';
export type {
  ApprovalService,
  ApprovalRequest,
  ApprovalDecision,
  Approver,
} from './tools/approval-service.ts';
export { builtinTools } from './tools/builtin/builtin-tools.ts';
export type { BuiltinToolsOptions } from './tools/builtin/builtin-tools.ts';

// Providers.
export { AnthropicProvider } from './providers/anthropic/anthropic-provider.ts';
export type { AnthropicProviderOptions } from './providers/anthropic/anthropic-provider.ts';
export { OpenAICompatibleProvider } from './providers/openai-compatible/openai-compatible-provider.ts';
export type { OpenAICompatibleProviderOptions } from './providers/openai-compatible/openai-compatible-provider.ts';
export type { OpenAIRequestStyle } from './providers/openai-compatible/openai-request.ts';
export { DemoProvider } from './providers/demo/demo-provider.ts';
export type { DemoProviderOptions } from './providers/demo/demo-provider.ts';
export { lookupModel } from './providers/catalog/model-catalog.ts';
export type { CatalogModel } from './providers/catalog/model-catalog.ts';
export { sessionCost } from './providers/catalog/cost.ts';
export type { ModelPricing, SessionCost, CostTotals } from './providers/catalog/cost.ts';

// Plugins.
export { permissionsPlugin } from './plugins/permissions/permissions-plugin.ts';
export type { PermissionsOptions } from './plugins/permissions/permissions-plugin.ts';
export { permissionModes } from './plugins/permissions/permission-policy.ts';
export type { PermissionMode, PermissionRule } from './plugins/permissions/permission-policy.ts';
export { goalsPlugin, setGoal, clearGoal, activeGoal } from './plugins/goals/goals-plugin.ts';
export type { GoalsPluginOptions, SetGoalOptions, Goal } from './plugins/goals/goals-plugin.ts';
export type { GoalStopReason } from './plugins/goals/goal-events.ts';
export {
  budgetsPlugin,
  budgetUsage,
  raiseBudget,
  continueAfterBudget,
  stopAfterBudget,
} from './plugins/budgets/budgets-plugin.ts';
export type { BudgetsPluginOptions, BudgetReport, BudgetRaise } from './plugins/budgets/budgets-plugin.ts';
export type { BudgetSpend } from './plugins/budgets/budget-meter.ts';
export type {
  BudgetKind,
  BudgetLimits,
  BudgetLimitName,
  BudgetScope,
  BudgetChange,
} from './plugins/budgets/budget-events.ts';
export { compactionPlugin } from './plugins/compaction/compaction-plugin.ts';
export type {
  CompactionOptions,
  CompactionSettings,
  CompactionOverride,
  PruneSettings,
  CompactionWarning,
} from './plugins/compaction/compaction-options.ts';
export { compactSession } from './plugins/compaction/compact-session.ts';
export type { CompactSessionOptions, CompactSessionResult } from './plugins/compaction/compact-session.ts';
export { CompactionError } from './plugins/compaction/compaction-error.ts';
export type { CompactionErrorCode } from './plugins/compaction/compaction-error.ts';
export { repetitionGuardPlugin } from './plugins/repetition-guard/repetition-guard-plugin.ts';
export type { RepetitionGuardOptions } from './plugins/repetition-guard/repetition-guard-plugin.ts';
export { retryPlugin } from './plugins/retry/retry-plugin.ts';
export type { RetryPluginOptions } from './plugins/retry/retry-plugin.ts';
export { subagentsPlugin } from './plugins/subagents/subagents-plugin.ts';
export type { SubagentsPluginOptions } from './plugins/subagents/subagents-plugin.ts';

// Configuration.
export type { ReinConfig, ProviderConfig } from './config/rein-config.ts';
export { ConfigError } from './config/config-error.ts';
export type { ConfigErrorCode } from './config/config-error.ts';

// The transcript: one typed fold of the log that every view reads.
export { Transcript } from './transcript/transcript.ts';
export type { TranscriptOptions } from './transcript/transcript.ts';
export type { TranscriptCost, UsageCarry, ModelUsageSum } from './transcript/turn-usage-ledger.ts';
export type { TranscriptCarry } from './transcript/transcript-carry.ts';
export { TranscriptPageError } from './transcript/transcript-carry.ts';
export type { TranscriptPricing } from './transcript/transcript-parts.ts';
export type * from './transcript/transcript-item.ts';
export type { RecordNote, RecordView } from './session/record-view.ts';
export { defaultRecordViews } from './record-views.ts';

// Sessions on PostgreSQL: many servers, one writer per session.
export { PostgresSessionStore } from './session/stores/postgres-session-store.ts';
export type { PostgresSessionStoreOptions } from './session/stores/postgres-session-store-options.ts';
export { SessionFencedError } from './session/stores/postgres-lease.ts';
export { openSessionStore } from './session/stores/open-session-store.ts';
export type { OpenSessionStoreOptions } from './session/stores/open-session-store.ts';

// MCP: the tools of Model Context Protocol servers.
export { mcpPlugin } from './plugins/mcp/mcp-plugin.ts';
export type { McpPlugin, McpPluginOptions, McpAttachment, McpServerList } from './plugins/mcp/mcp-plugin.ts';
export { mcpServersFromList } from './plugins/mcp/mcp-server-config.ts';
export type {
  McpServerConfig,
  McpStdioServerConfig,
  McpHttpServerConfig,
  McpServerDefinition,
} from './plugins/mcp/mcp-server-config.ts';
export { McpError } from './plugins/mcp/mcp-error.ts';
export type { McpErrorCode } from './plugins/mcp/mcp-error.ts';

// Editors: the file tools' editor seam, how tools present themselves, and a session's approval mode.
export type { ToolCategory, ToolEdit, ToolPreview, ToolConfinement } from './tools/tool.ts';
export type { EditorFiles, EditorFileContext } from './tools/builtin/builtin-settings.ts';
export { setPermissionMode, permissionModeOf } from './plugins/permissions/permissions-plugin.ts';

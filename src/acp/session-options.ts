import type { SessionConfigOption, SessionModeState } from '@agentclientprotocol/sdk';
import type { PermissionMode } from '../internal.ts';
import {
  acceptsImages,
  parseModelRoute,
  permissionModeOf,
  permissionModes,
  setPermissionMode,
} from '../internal.ts';
import { reinRequestError } from './acp-errors.ts';
import type { AcpSession } from './acp-session.ts';

const modeInfo: Readonly<Record<PermissionMode, { name: string; description: string }>> = {
  ask: { name: 'Ask', description: 'Reads in the workspace run; edits and commands ask first.' },
  'auto-edit': { name: 'Auto-edit', description: 'Edits in the workspace run too; commands ask first.' },
  yolo: { name: 'Yolo', description: 'Everything runs without asking.' },
  'read-only': { name: 'Read-only', description: 'Changes are refused; reads run.' },
  sandbox: {
    name: 'Sandbox',
    description: 'Edits and shell commands in the bubblewrap sandbox run; anything leaving it asks first.',
  },
};

/** The config option ids Rein offers. */
export const modeOptionId = 'mode';
export const modelOptionId = 'model';

/** The approval mode a session runs under: its durable choice, else the agent's default. */
export function currentMode(session: AcpSession): PermissionMode {
  return permissionModeOf(session.agent.session) ?? session.harness.approvalMode;
}

/** Rein's approval modes as ACP session modes. */
export function modeState(session: AcpSession): SessionModeState {
  return {
    currentModeId: currentMode(session),
    availableModes: permissionModes.map((mode) => ({ id: mode, ...modeInfo[mode] })),
  };
}

function routeText(route: { provider: string; model: string }): string {
  return `${route.provider}/${route.model}`;
}

/** The approval mode and model pickers of a session. */
export function configOptions(session: AcpSession): SessionConfigOption[] {
  const llm = session.harness.llm;
  const current = routeText(session.route);
  const models: { value: string; name: string }[] = [];
  for (const provider of llm.providers()) {
    const adapter = llm.adapter(provider);
    for (const model of adapter?.listModels?.() ?? []) {
      const info = adapter?.describeModel?.(model);
      models.push({
        value: `${provider}/${model}`,
        name: info?.label ?? `${provider}/${model}`,
        // The editor decided at initialize whether to offer images; this says which models take them.
        ...(acceptsImages(info) ? { description: 'Takes images' } : {}),
      });
    }
  }
  if (!models.some((entry) => entry.value === current)) models.unshift({ value: current, name: current });
  return [
    {
      id: modeOptionId,
      name: 'Approval mode',
      category: 'mode',
      type: 'select',
      currentValue: currentMode(session),
      options: permissionModes.map((mode) => ({ value: mode, ...modeInfo[mode] })),
    },
    {
      id: modelOptionId,
      name: 'Model',
      category: 'model',
      type: 'select',
      currentValue: current,
      options: models,
    },
  ];
}

/** Switches the session's approval mode durably; a protocol error (`INVALID_MODE`) for an unknown one. */
export function applyMode(session: AcpSession, modeId: string): void {
  const mode = permissionModes.find((candidate) => candidate === modeId);
  if (mode === undefined) {
    throw reinRequestError('INVALID_MODE', `unknown mode '${modeId}' (modes: ${permissionModes.join(', ')})`);
  }
  if (mode !== currentMode(session)) setPermissionMode(session.agent.session, mode);
}

/** Sets one config option; a protocol error for an unknown option or value. */
export function applyConfigOption(session: AcpSession, configId: string, value: unknown): void {
  if (typeof value !== 'string') {
    throw reinRequestError('INVALID_CONFIG_VALUE', `option '${configId}' takes one of its listed values`);
  }
  if (configId === modeOptionId) return applyMode(session, value);
  if (configId === modelOptionId) return session.setRoute(parseModelRoute(value));
  throw reinRequestError('UNKNOWN_CONFIG_OPTION', `no config option '${configId}' (options: mode, model)`);
}

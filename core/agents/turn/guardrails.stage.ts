import type { Guardrails } from '../guardrails.js';
import type { Turn } from './turn-state.js';

/** The input guardrails, when the agent has them on: a block answers with the fallback message, so the model is not called. */
export async function checkInput(guardrails: Guardrails, turn: Turn): Promise<void> {
  const view = turn.agent.view;
  if (!view.guardrails.input.enabled) return;
  turn.plan.push('input_guardrails');
  turn.inputVerdict = await turn.timed('guardrails', () => guardrails.check(view.guardrails.input, turn.message, 'input'));
  if (!turn.inputVerdict.allowed) {
    turn.status = 'blocked';
    turn.answer = view.fallback_message;
  }
}

/** The output guardrails, when the agent has them on and the turn was not escalated: a block replaces the answer with the fallback message. */
export async function checkOutput(guardrails: Guardrails, turn: Turn): Promise<void> {
  const view = turn.agent.view;
  if (!view.guardrails.output.enabled || turn.escalated) return;
  turn.plan.push('output_guardrails');
  turn.outputVerdict = await turn.timed('guardrails', () => guardrails.check(view.guardrails.output, turn.answer ?? '', 'output'));
  if (!turn.outputVerdict.allowed) {
    turn.status = 'blocked';
    turn.answer = view.fallback_message;
    turn.citations = [];
  }
}

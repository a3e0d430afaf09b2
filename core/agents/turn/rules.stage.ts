import { compileCondition } from '../conditions.js';
import type { Turn } from './turn-state.js';

/**
 * The agent's rules, highest priority first: a ui_action rule that matches adds its action; the
 * first escalation, response or block rule that matches answers with its action text, which ends
 * the turn. A condition that cannot be evaluated is noted and skipped.
 */
export async function applyRules(turn: Turn): Promise<void> {
  turn.plan.push('rules');
  await turn.timed('rules', async () => {
    const input = turn.conditionInput();
    for (const rule of turn.agent.view.rules) {
      let matched: boolean;
      try {
        matched = compileCondition(rule.condition, 'rule', `/rules/${rule.id}/condition`)(input);
      } catch (err) {
        turn.noteError(`rule ${rule.id}`, err);
        continue;
      }
      if (!matched) continue;
      turn.matchedRules.push(rule);
      switch (rule.rule_type) {
        case 'ui_action':
          turn.uiActions.push({ type: rule.action, source: 'rule', rule_id: rule.id });
          continue;
        case 'escalation':
          turn.escalated = true;
          turn.status = 'escalated';
          turn.plan.push('escalate');
          break;
        case 'block':
          turn.status = 'blocked';
          turn.plan.push('block');
          break;
        case 'response':
          turn.plan.push('respond:rule');
          break;
      }
      turn.answer = rule.action;
      return;
    }
  });
}

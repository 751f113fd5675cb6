/**
 * A malformed condition said one mistake at a time, at the faulty value itself, with what was
 * expected and what was found (`agentId: "in" expects 1–100 strings or numbers, got the string
 * "QA"`; `unknown operator "In", did you mean "in"?`), where the schema's union only says that none
 * of four shapes matched. Pure.
 */
import { ARGUMENT_NAME_REGEX, MAX_CONDITION_VALUES, MAX_CONDITION_VALUE_LENGTH } from '../../schemas/index.js';
import { quoteForMessage } from '../../schemas/requester.js';
import { closest } from './suggest.js';

/** One mistake: the JSON pointer of the faulty value and what is wrong with it. */
export interface ConditionMistake {
  readonly path: string;
  readonly message: string;
}

const OPERATORS = ['in', 'notIn', 'prefix', 'absent'] as const;
type Operator = (typeof OPERATORS)[number];

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const pointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** What a value is, for "got …": its kind, and a string's or a number's text. */
function described(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return `the string ${quoteForMessage(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : `a list of ${value.length}`;
  return 'an object';
}

/** The condition mistakes of every policy of a parsed policy document, in document order. */
export function documentConditionMistakes(document: unknown): ConditionMistake[] {
  if (!isRecord(document)) return [];
  const found: ConditionMistake[] = [];
  if (isRecord(document.projectDefault))
    found.push(...conditionsMistakes('/projectDefault/conditions', document.projectDefault.conditions));
  const agents: unknown[] = Array.isArray(document.agents) ? document.agents : [];
  for (const [index, agent] of agents.entries()) {
    if (isRecord(agent) && isRecord(agent.policy))
      found.push(...conditionsMistakes(`/agents/${index}/policy/conditions`, agent.policy.conditions));
  }
  return found;
}

/** The mistakes of `conditions` (a policy's `conditions` member) found at `path`, in document order. */
export function conditionsMistakes(path: string, conditions: unknown): ConditionMistake[] {
  // Not an object: the schema's own message says so at `path`.
  if (!isRecord(conditions)) return [];
  const mistakes: ConditionMistake[] = [];
  for (const [tool, toolConditions] of Object.entries(conditions)) {
    const at = `${path}/${pointer(tool)}`;
    if (!isRecord(toolConditions)) {
      mistakes.push({ path: at, message: `${tool}: conditions map argument names to a condition, got ${described(toolConditions)}` });
      continue;
    }
    for (const [argument, condition] of Object.entries(toolConditions)) {
      mistakes.push(...conditionMistakes(`${at}/${pointer(argument)}`, argument, condition));
    }
  }
  return mistakes;
}

/** The mistakes of one argument's condition. */
export function conditionMistakes(path: string, argument: string, condition: unknown): ConditionMistake[] {
  const name = quoteForMessage(argument);
  if (!ARGUMENT_NAME_REGEX.test(argument)) {
    return [{ path, message: `argument name ${name} must match ^[A-Za-z_][A-Za-z0-9_]{0,63}$` }];
  }
  if (!isRecord(condition)) {
    return [
      {
        path,
        message: `${argument}: a condition is an object with one operator (in, notIn, prefix or absent), got ${described(condition)}`,
      },
    ];
  }
  const mistakes: ConditionMistake[] = [];
  const operators: Operator[] = [];
  for (const key of Object.keys(condition)) {
    const operator = OPERATORS.find((known) => known === key);
    if (operator === undefined) {
      const near = closest(key, OPERATORS);
      const hint = near === undefined ? ' (in, notIn, prefix or absent)' : `, did you mean ${JSON.stringify(near)}?`;
      mistakes.push({ path: `${path}/${pointer(key)}`, message: `${argument}: unknown operator ${quoteForMessage(key)}${hint}` });
      continue;
    }
    if (operators.length > 0) {
      mistakes.push({ path: `${path}/${key}`, message: `${argument}: one operator per argument, got ${operators.join(', ')} and ${key}` });
      continue;
    }
    operators.push(operator);
    mistakes.push(...operandMistakes(`${path}/${key}`, argument, operator, condition[key]));
  }
  if (operators.length === 0 && mistakes.length === 0) {
    mistakes.push({ path, message: `${argument}: a condition needs one operator: in, notIn, prefix or absent` });
  }
  return mistakes;
}

function operandMistakes(path: string, argument: string, operator: Operator, operand: unknown): ConditionMistake[] {
  if (operator === 'absent') {
    if (operand === true) return [];
    const advice = operand === false ? ' (to allow the argument, remove the condition)' : '';
    return [{ path, message: `${argument}: "absent" expects true, got ${described(operand)}${advice}` }];
  }
  const expects =
    operator === 'prefix'
      ? `"prefix" expects 1–${MAX_CONDITION_VALUES} non-empty strings`
      : `"${operator}" expects 1–${MAX_CONDITION_VALUES} strings or numbers`;
  if (!Array.isArray(operand) || operand.length === 0 || operand.length > MAX_CONDITION_VALUES) {
    return [{ path, message: `${argument}: ${expects}, got ${described(operand)}` }];
  }
  const mistakes: ConditionMistake[] = [];
  for (const [index, value] of operand.entries()) {
    const wrongType = operator === 'prefix' ? typeof value !== 'string' : typeof value !== 'string' && typeof value !== 'number';
    const blank = operator === 'prefix' && typeof value === 'string' && value.trim() === '';
    if (wrongType || blank) {
      mistakes.push({ path: `${path}/${index}`, message: `${argument}: ${expects}, got ${described(value)} in it` });
    } else if (typeof value === 'string' && value.length > MAX_CONDITION_VALUE_LENGTH) {
      mistakes.push({
        path: `${path}/${index}`,
        message: `${argument}: a value holds at most ${MAX_CONDITION_VALUE_LENGTH} characters, got ${value.length}`,
      });
    }
  }
  return mistakes;
}

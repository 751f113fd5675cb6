/**
 * Conditions on a tool's arguments (docs/api.md#conditions-on-a-tools-arguments): a policy may narrow a tool it allows or asks
 * for to some values of its arguments. One operator per argument; all conditions of a tool must hold.
 */
import { Type, type Static } from '@sinclair/typebox';

/** What an argument name looks like in a condition. */
export const ARGUMENT_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]{0,63}$';
export const ARGUMENT_NAME_REGEX = new RegExp(ARGUMENT_NAME_PATTERN);
/** Values an `in`, `notIn` or `prefix` condition lists at most. */
export const MAX_CONDITION_VALUES = 100;
/** Longest string an `in`, `notIn` or `prefix` condition lists: far longer than a command line a policy names. */
export const MAX_CONDITION_VALUE_LENGTH = 1024;

const conditionValue = Type.Union([Type.String({ maxLength: MAX_CONDITION_VALUE_LENGTH }), Type.Number()]);
const valueList = (description: string) => Type.Array(conditionValue, { minItems: 1, maxItems: MAX_CONDITION_VALUES, description });

export const InConditionSchema = Type.Object(
  { in: valueList('The argument equals one of these, by type and value (issueRef: as a ticket number, "#82" = "82" = 82).') },
  { additionalProperties: false },
);
export const NotInConditionSchema = Type.Object(
  { notIn: valueList('The argument is present and equals none of these (issueRef: as a ticket number).') },
  { additionalProperties: false },
);
export const PrefixConditionSchema = Type.Object(
  {
    prefix: Type.Array(Type.String({ minLength: 1, maxLength: MAX_CONDITION_VALUE_LENGTH, pattern: '\\S' }), {
      minItems: 1,
      maxItems: MAX_CONDITION_VALUES,
      description:
        'The argument is a string whose words begin with all the words of one of these, then only words of ASCII letters, digits and _ - . / : = @ % + , (no .. segment; a word may begin with - only after a prefix ending with --).',
    }),
  },
  { additionalProperties: false },
);
export const AbsentConditionSchema = Type.Object(
  { absent: Type.Literal(true, { description: 'The call must not carry this argument (null and "" included).' }) },
  { additionalProperties: false },
);

export const ConditionSchema = Type.Union([InConditionSchema, NotInConditionSchema, PrefixConditionSchema, AbsentConditionSchema], {
  description: 'Exactly one operator: in, notIn, prefix or absent.',
});
export type Condition = Static<typeof ConditionSchema>;

export const ToolConditionsSchema = Type.Record(Type.String({ pattern: ARGUMENT_NAME_PATTERN }), ConditionSchema, {
  description: 'Conditions on the arguments of one tool, by argument name; all must hold.',
  additionalProperties: false,
});
export type ToolConditions = Static<typeof ToolConditionsSchema>;

export const PolicyConditionsSchema = Type.Record(Type.String({ maxLength: 128 }), ToolConditionsSchema, {
  description: 'Conditions by tool name; each tool must be in the same policy’s allowedTools or askTools.',
});
export type PolicyConditions = Static<typeof PolicyConditionsSchema>;

/** The operator of a condition. */
export type ConditionOperator = 'in' | 'notIn' | 'prefix' | 'absent';

/** `details.problems[]` of `400 invalid_conditions`. */
export interface ConditionProblem {
  tool: string;
  argument?: string;
  message: string;
}

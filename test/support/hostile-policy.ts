/**
 * A policy document that names many tools the catalog does not have, padded to a size: the shape
 * a hostile preview body or policy file takes to make locating its problems costly (bench/README.md#targets).
 */

/** A valid document of about `bytes` bytes naming `names` distinct unknown tools, 250 per override. */
export function hostilePolicy(names: number, bytes: number): string {
  const perName = Math.floor(bytes / names);
  const nameLength = Math.max(8, Math.min(120, perName - 12));
  const indent = ' '.repeat(Math.max(6, perName - nameLength - 4));
  const agents: string[] = [];
  for (let agent = 0, n = 0; n < names; agent++) {
    const list: string[] = [];
    for (let i = 0; i < 250 && n < names; i++, n++) list.push(JSON.stringify(`x${n}_`.padEnd(nameLength, 'y')));
    agents.push(`    { "agentId": "Agent${agent}", "policy": { "allowedTools": [\n${indent}${list.join(`,\n${indent}`)}\n    ] } }`);
  }
  return `{\n  "version": 1,\n  "agents": [\n${agents.join(',\n')}\n  ]\n}\n`;
}

/**
 * The brief's routing block (its rules and its confidence cascade), as the YAML lines that go
 * under `route:` — what tests and benches of the route decision run on.
 */
export const BRIEF_ROUTE_RULES = `  rules:
    - when: { intent: [summarize, intent_classify, extract_entity], estimated_complexity: low }
      target: edge
    - when: { intent: [code_gen, multi_hop_reasoning, math] }
      target: cloud
  fallback: { enable: true, confidence_threshold: 0.6, upgrade_target: cloud }
`;

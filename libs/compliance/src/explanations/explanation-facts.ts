import type { Role } from '#platform';
import type {
  AgentsRepository,
  PolicyCondition,
  PolicyMatchMode,
  ReviewItemsRepository,
  TraceFeedbackRepository,
  TracesRepository,
} from '#governance';

type Found<F extends (...args: never[]) => Promise<unknown>> = NonNullable<Awaited<ReturnType<F>>>;

export type ExplainedTrace = Found<TracesRepository['findById']>;

/** Everything the records hold about one decision that its explanation states; nothing else is said. */
export interface ExplanationFacts {
  trace: ExplainedTrace;
  /** Undefined once the agent was deleted. */
  agent?: Pick<Found<AgentsRepository['find']>, 'name' | 'description'>;
  /** The matched policies that still exist, by id, as they are now. */
  policies: ReadonlyMap<string, { conditions: PolicyCondition[]; match: PolicyMatchMode; updatedAt: Date }>;
  /** The trace's review item, when it was flagged. */
  review?: Found<ReviewItemsRepository['find']>;
  /** The role in the organization of the member who decided the review item. */
  reviewerRole: Role | null;
  /** The human feedback on the trace (its latest verdict). */
  feedback?: Found<TraceFeedbackRepository['find']>;
  /** The approval pattern that approved the trace at ingestion. */
  autoApprovedBy: string | null;
  /** The organization's contest contact. */
  contact: string | null;
}

/**
 * The reload skeleton Refus récents, the approval requests and the other MCP servers share
 * ({@link ProjectList}), on the real store: one read at a time with a burst costing one more,
 * answers for a project no longer open dropped, nothing drawn when nothing changed, failures
 * handed over as an ApiError, and one read per load of the view.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../ui/src/api/api.js';
import { ProjectList } from '../../ui/src/controllers/project-list.js';
import { initialState } from '../../ui/src/state/state.js';
import { Store } from '../../ui/src/state/store.js';

interface Pending {
  project: string;
  resolve: (names: string[]) => void;
  reject: (error: unknown) => void;
}

/** A list of names whose reads the test answers one by one; it stages what it shows into `announcement`. */
class Names extends ProjectList<string[]> {
  readonly reads: Pending[] = [];
  readonly failures: ApiError[] = [];

  protected fetch(project: string): Promise<string[]> {
    return new Promise((resolve, reject) => this.reads.push({ project, resolve, reject }));
  }

  protected apply(names: string[], project: string): boolean {
    const text = `${project}: ${names.join(', ')}`;
    if (this.state.announcement === text) return false;
    this.store.stage((state) => {
      state.announcement = text;
    });
    return true;
  }

  protected readFailed(failure: ApiError): void {
    this.failures.push(failure);
    this.store.stage((state) => {
      state.announcement = `failed: ${failure.code}`;
    });
  }
}

function setUp(project: string | null = 'demo') {
  const store = new Store(initialState(null));
  store.stage((state) => {
    state.projectId = project;
  });
  const renders: string[] = [];
  store.subscribe((state) => renders.push(state.announcement));
  return { store, names: new Names(store), renders };
}

/** Lets the awaited promise chains of a read run to their end. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

describe('ProjectList', () => {
  it('reads one at a time: a burst of reasons during a read costs exactly one more read', async () => {
    const { names, renders } = setUp();
    const first = names.refresh();
    const burst = [names.refresh(), names.refresh(), names.refresh()];
    expect(names.reads).toHaveLength(1);
    names.reads[0]?.resolve(['a']);
    await Promise.all([first, ...burst]);
    await settle();
    expect(names.reads).toHaveLength(2);
    names.reads[1]?.resolve(['a', 'b']);
    await settle();
    expect(names.reads).toHaveLength(2);
    expect(renders).toEqual(['demo: a', 'demo: a, b']);
  });

  it('draws nothing when a read brings nothing new', async () => {
    const { names, renders } = setUp();
    for (const answer of [['a'], ['a'], ['b']]) {
      const read = names.refresh();
      names.reads.at(-1)?.resolve(answer);
      await read;
    }
    expect(names.reads).toHaveLength(3);
    expect(renders).toEqual(['demo: a', 'demo: b']);
  });

  it('drops an answer, or a failure, for a project no longer open', async () => {
    const { store, names, renders } = setUp();
    const answered = names.refresh();
    store.stage((state) => {
      state.projectId = 'other';
    });
    names.reads[0]?.resolve(['a']);
    await answered;
    const failed = names.refresh();
    store.stage((state) => {
      state.projectId = 'third';
    });
    names.reads[1]?.reject(new ApiError(500, 'internal', 'boom'));
    await failed;
    expect(names.reads.map((read) => read.project)).toEqual(['demo', 'other']);
    expect(names.failures).toEqual([]);
    expect(renders).toEqual([]);
    expect(store.state.announcement).toBe('');
  });

  it('hands a failure over as an ApiError and draws it', async () => {
    const { names, renders } = setUp();
    const network = names.refresh();
    names.reads[0]?.reject(new TypeError('Failed to fetch'));
    await network;
    const refused = names.refresh();
    names.reads[1]?.reject(new ApiError(403, 'forbidden', 'no'));
    await refused;
    expect(names.failures.every((failure) => failure instanceof ApiError)).toBe(true);
    expect(names.failures[1]?.code).toBe('forbidden');
    expect(renders).toHaveLength(2);
    expect(renders[1]).toBe('failed: forbidden');
  });

  it('reads nothing without an open project', async () => {
    const { names, renders } = setUp(null);
    await names.refresh();
    expect(names.reads).toEqual([]);
    expect(renders).toEqual([]);
  });

  it('reads once per load of the view', async () => {
    const { store, names } = setUp();
    names.followLoads(); // loadCount 0: nothing loaded yet
    expect(names.reads).toHaveLength(0);
    store.stage((state) => {
      state.loadCount = 1;
    });
    names.followLoads();
    names.followLoads();
    expect(names.reads).toHaveLength(1);
    names.reads[0]?.resolve(['a']);
    await settle();
    store.stage((state) => {
      state.loadCount = 2;
    });
    names.followLoads();
    expect(names.reads).toHaveLength(2);
  });
});

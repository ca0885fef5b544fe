/**
 * The comparators of the iterative preference trainers: sources of candidate completions that the
 * current policy's are paired against. So far the "api" policy:
 * {@link comlrl.trainers.preference.comparator.ApiComparator} asks an external model over HTTP, in
 * one of the {@link comlrl.trainers.preference.comparator.ApiFormat}s, configured by
 * {@link comlrl.trainers.preference.comparator.ApiComparatorSettings} (the
 * {@code comparator_api_*} keys). Nothing here touches a model or a tensor.
 */
package comlrl.trainers.preference.comparator;

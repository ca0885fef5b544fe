/**
 * Completions generated remotely: {@link comlrl.generation.api.ApiComparator} asks an external model
 * over HTTP for candidate completions of a prompt, in one of the
 * {@link comlrl.generation.api.ApiFormat}s, configured by
 * {@link comlrl.generation.api.ApiComparatorSettings} (the {@code comparator_api_*} keys). The
 * iterative preference trainers use it as their "api" comparator policy. Nothing here touches a
 * model or a tensor; it depends on {@code comlrl.net} and the config readers of {@code comlrl.utils}.
 */
package comlrl.generation.api;
